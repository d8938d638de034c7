//! Stored vectors: one record per embedded document (`vec/<id>`, see
//! `store::layout`), with the model that made it. The floats travel as base64 of their little-endian
//! bytes: a 384-dimension vector is 2 KB of text, where a JSON number array
//! would be 3 to 4 times that and slower to parse.

use serde::{Deserialize, Serialize};

use crate::base64::{base64, unbase64};
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Record {
    model: String,
    dim: usize,
    data: String,
}

pub fn encode(model: &str, vector: &[f32]) -> String {
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    let record = Record { model: model.to_string(), dim: vector.len(), data: base64(&bytes) };
    serde_json::to_string(&record).expect("a vector record serializes")
}

/// The model and the vector of a record; an error when it does not parse
/// or its length disagrees with its `dim` (a damaged record).
pub fn decode(json: &str) -> Result<(String, Vec<f32>)> {
    let record: Record =
        serde_json::from_str(json).map_err(|e| Error::invalid(format!("vector record: {e}")))?;
    let bytes = unbase64(&record.data).ok_or_else(|| Error::invalid("vector record: bad base64"))?;
    if bytes.len() != record.dim * 4 {
        return Err(Error::invalid("vector record: length disagrees with dim"));
    }
    let vector = bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    Ok((record.model, vector))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_bit_for_bit_at_every_padding() {
        for n in 0..7 {
            let v: Vec<f32> = (0..n).map(|i| (i as f32 - 2.5) * 0.123_456_7).collect();
            let (model, back) = decode(&encode("m", &v)).unwrap();
            assert_eq!((model.as_str(), back), ("m", v));
        }
    }

    #[test]
    fn damaged_records_are_errors() {
        let good = encode("m", &[1.0, 2.0]);
        assert!(decode(&good.replace("\"dim\":2", "\"dim\":3")).is_err());
        assert!(decode("{\"model\":\"m\",\"dim\":1,\"data\":\"@@@@\"}").is_err());
        assert!(decode("not json").is_err());
    }
}
