//! Relative dates made absolute against the message's time: "yesterday"
//! said on 8 May 2023 is "on 7 May 2023", "last month" is "in April 2023",
//! "去年" is "2022年". A memory outlives the day it was said on; "yesterday"
//! read a month later would be wrong.

use crate::dates::{civil, Date};

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

pub const WEEKDAYS: [&str; 7] =
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

fn day_of(ms: i64) -> i64 {
    ms.div_euclid(86_400_000)
}

fn en(d: Date) -> String {
    format!("{} {} {}", d.day, MONTHS[d.month as usize - 1], d.year)
}

fn zh(d: Date) -> String {
    format!("{}年{}月{}日", d.year, d.month, d.day)
}

/// The month `delta` months from `d`'s.
fn month_shift(d: Date, delta: i64) -> (i64, u32) {
    let m = d.year * 12 + d.month as i64 - 1 + delta;
    (m.div_euclid(12), (m.rem_euclid(12) + 1) as u32)
}

/// Replaces whole words case-insensitively (ASCII phrases).
fn replace_phrase(text: &str, phrase: &str, with: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut from = 0;
    while let Some(pos) = lower[from..].find(phrase).map(|p| p + from) {
        let end = pos + phrase.len();
        let before_ok = lower[..pos].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after_ok = lower[end..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        if before_ok && after_ok {
            out.push_str(&text[last..pos]);
            out.push_str(with);
            last = end;
        }
        from = end;
    }
    out.push_str(&text[last..]);
    out
}

/// `text` with its relative dates resolved against `said_at_ms`.
pub fn resolve(text: &str, said_at_ms: i64) -> String {
    let today = day_of(said_at_ms);
    let d = civil(today);
    let on = |delta: i64| format!("on {}", en(civil(today + delta)));
    let month = |delta: i64| {
        let (y, m) = month_shift(d, delta);
        format!("in {} {y}", MONTHS[m as usize - 1])
    };
    // Monday = 0; 1970-01-01 was a Thursday.
    let weekday = (today + 3).rem_euclid(7);
    let mut out = text.to_string();
    let english: [(&str, String); 14] = [
        ("the day before yesterday", on(-2)),
        ("yesterday", on(-1)),
        ("today", on(0)),
        ("tonight", format!("the night of {}", en(d))),
        ("this morning", format!("the morning of {}", en(d))),
        ("tomorrow", on(1)),
        ("last week", format!("the week before {}", en(d))),
        ("next week", format!("the week after {}", en(d))),
        ("last month", month(-1)),
        ("next month", month(1)),
        ("this month", month(0)),
        ("last year", format!("in {}", d.year - 1)),
        ("next year", format!("in {}", d.year + 1)),
        ("this year", format!("in {}", d.year)),
    ];
    for (phrase, with) in &english {
        out = replace_phrase(&out, phrase, with);
    }
    for (i, name) in WEEKDAYS.iter().enumerate() {
        let back = (weekday - i as i64).rem_euclid(7);
        let back = if back == 0 { 7 } else { back };
        let forward = (i as i64 - weekday).rem_euclid(7);
        let forward = if forward == 0 { 7 } else { forward };
        let cap = format!("{}{}", name[..1].to_ascii_uppercase(), &name[1..]);
        out =
            replace_phrase(&out, &format!("last {name}"), &format!("on {cap}, {}", en(civil(today - back))));
        out = replace_phrase(
            &out,
            &format!("next {name}"),
            &format!("on {cap}, {}", en(civil(today + forward))),
        );
    }
    let (ly, lm) = month_shift(d, -1);
    let (ny, nm) = month_shift(d, 1);
    let chinese: [(&str, String); 11] = [
        ("前天", zh(civil(today - 2))),
        ("昨天", zh(civil(today - 1))),
        ("今天", zh(d)),
        ("明天", zh(civil(today + 1))),
        ("后天", zh(civil(today + 2))),
        ("上个月", format!("{ly}年{lm}月")),
        ("下个月", format!("{ny}年{nm}月")),
        ("这个月", format!("{}年{}月", d.year, d.month)),
        ("去年", format!("{}年", d.year - 1)),
        ("明年", format!("{}年", d.year + 1)),
        ("今年", format!("{}年", d.year)),
    ];
    for (word, with) in &chinese {
        out = out.replace(word, with);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-05-08 13:56 UTC, a Monday.
    const MAY_8: i64 = 1_683_554_160_000;

    #[test]
    fn calendar_is_right_across_months_years_and_leap_days() {
        assert_eq!(civil(0), Date { year: 1970, month: 1, day: 1 });
        assert_eq!(civil(day_of(MAY_8)), Date { year: 2023, month: 5, day: 8 });
        assert_eq!(civil(day_of(951_782_400_000)), Date { year: 2000, month: 2, day: 29 });
        assert_eq!(month_shift(Date { year: 2024, month: 1, day: 5 }, -1), (2023, 12));
    }

    #[test]
    fn english_and_chinese_relative_dates() {
        assert_eq!(
            resolve("I went to a support group yesterday and Yesterday's talk was good.", MAY_8),
            "I went to a support group on 7 May 2023 and Yesterday's talk was good."
                .replace("Yesterday's", "on 7 May 2023's")
        );
        assert_eq!(resolve("I ran a race last Saturday", MAY_8), "I ran a race on Saturday, 6 May 2023");
        assert_eq!(resolve("I start next Monday", MAY_8), "I start on Monday, 15 May 2023");
        assert_eq!(
            resolve("We moved last month; camping next month", MAY_8),
            "We moved in April 2023; camping in June 2023"
        );
        assert_eq!(resolve("I painted it last year", MAY_8), "I painted it in 2022");
        assert_eq!(
            resolve("我昨天去了图书馆，下个月去大理，去年在成都", MAY_8),
            "我2023年5月7日去了图书馆，2023年6月去大理，2022年在成都"
        );
        assert_eq!(resolve("the yesterdays and todayness stay", MAY_8), "the yesterdays and todayness stay");
    }
}
