//! Calendar dates in UTC, for every module that reads or writes one: the
//! day a record is counted under, the date an event's text names. No time
//! zone tables; Howard Hinnant's algorithms.

const DAY_MS: i64 = 86_400_000;

/// A civil date (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Date {
    pub year: i64,
    pub month: u32,
    pub day: u32,
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm, no
/// time zone tables).
pub fn civil(days: i64) -> Date {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    Date { year: yoe + era * 400 + (month <= 2) as i64, month, day }
}

/// Days since 1970-01-01 of a civil date (the inverse of [`civil`]).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Midnight UTC of a civil date, in ms since the epoch.
pub fn ms_of(year: i64, month: u32, day: u32) -> i64 {
    days_from_civil(year, month, day) * DAY_MS
}

/// The civil date of a time in ms since the epoch.
pub fn date_of(ms: i64) -> Date {
    civil(ms.div_euclid(DAY_MS))
}

/// UTC calendar day of a timestamp, `YYYY-MM-DD`.
pub fn utc_day(ms: i64) -> String {
    let d = date_of(ms);
    format!("{:04}-{:02}-{:02}", d.year, d.month, d.day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_dates_round_trip() {
        for days in [-800_000, -1, 0, 1, 11_016, 19_480, 2_932_896] {
            let d = civil(days);
            assert_eq!(days_from_civil(d.year, d.month, d.day), days, "{d:?}");
        }
        assert_eq!(utc_day(0), "1970-01-01");
        assert_eq!(utc_day(951_782_400_000), "2000-02-29");
        assert_eq!(ms_of(2023, 5, 3), 1_683_072_000_000);
    }
}
