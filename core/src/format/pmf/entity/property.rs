//! Property data: the value of a custom property and of a setter (docs/spec/ENTITIES.md "Property data").
//!
//! ```text
//! u8   type (0 none, 1 bool, 2 i8, 3 i16, 4 i32, 5 i64, 6 u8, 7 u16, 8 u32, 9 u64, 10 f32, 11 f64, 12 str)
//! u32  dimension count
//! u32  length of each dimension
//! ...  values
//! ```
//!
//! Decisions where docs/spec/ENTITIES.md is silent:
//! - The number of values is the product of the dimension lengths; with no dimensions it is 1 (a
//!   scalar). Any zero length makes it 0. The product is computed in `u64` with overflow checks and
//!   checked against the bytes left before anything is allocated.
//! - Values of a multi-dimensional array are in row-major order: the last dimension varies fastest.
//! - Type 0 (none) has no values whatever its dimensions; its dimensions are kept as read.
//! - A scalar bool is one byte, 0 or 1; any other byte is a read error.
//! - The bools of an array (one or more dimensions) are a bitmap of `ceil(n / 8)` bytes, value `i`
//!   in bit `i % 8` (LSB first) of byte `i / 8`. The unused high bits of the last byte must be 0
//!   (read error otherwise), so that every bitmap has exactly one encoding.

use super::codec::{Codec, Out};
use crate::format::bin::{ReadResult, Reader};
use crate::format::pmf::error::WriteResult;
use crate::format::pmf::strings::StringTable;

/// A property value: dimensions and typed values (row-major, last dimension fastest).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct PropertyData {
    /// Length of each dimension; empty for a scalar.
    pub dims: Vec<u32>,
    /// The values, row-major; exactly as many as the product of `dims` (1 for a scalar), none for
    /// [`PropertyValues::None`].
    pub values: PropertyValues,
}

/// The values of a property, one variant per property type.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub enum PropertyValues {
    /// Type 0: no value.
    #[default]
    None,
    /// Type 1. A scalar bool is one byte, 0 or 1 (other bytes are read errors); the bools of an
    /// array are a bitmap of `ceil(n / 8)` bytes, value `i` in bit `i % 8` (LSB first) of byte
    /// `i / 8`, unused high bits of the last byte 0.
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Str(Vec<String>),
}

impl PropertyValues {
    /// The property type number written to the file.
    pub fn type_id(&self) -> u8 {
        match self {
            Self::None => 0,
            Self::Bool(_) => 1,
            Self::I8(_) => 2,
            Self::I16(_) => 3,
            Self::I32(_) => 4,
            Self::I64(_) => 5,
            Self::U8(_) => 6,
            Self::U16(_) => 7,
            Self::U32(_) => 8,
            Self::U64(_) => 9,
            Self::F32(_) => 10,
            Self::F64(_) => 11,
            Self::Str(_) => 12,
        }
    }

    /// The type's name, e.g. `i32`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Bool(_) => "bool",
            Self::I8(_) => "i8",
            Self::I16(_) => "i16",
            Self::I32(_) => "i32",
            Self::I64(_) => "i64",
            Self::U8(_) => "u8",
            Self::U16(_) => "u16",
            Self::U32(_) => "u32",
            Self::U64(_) => "u64",
            Self::F32(_) => "f32",
            Self::F64(_) => "f64",
            Self::Str(_) => "str",
        }
    }

    /// Number of values held.
    pub fn len(&self) -> usize {
        match self {
            Self::None => 0,
            Self::Bool(v) => v.len(),
            Self::I8(v) => v.len(),
            Self::I16(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::I64(v) => v.len(),
            Self::U8(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::U64(v) => v.len(),
            Self::F32(v) => v.len(),
            Self::F64(v) => v.len(),
            Self::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PropertyData {
    /// No value (type 0, no dimensions).
    pub const NONE: Self = Self { dims: Vec::new(), values: PropertyValues::None };

    /// A scalar: no dimensions, `values` must hold exactly one value.
    pub fn scalar(values: PropertyValues) -> Self {
        Self { dims: Vec::new(), values }
    }

    /// An array with the given dimensions.
    pub fn array(dims: Vec<u32>, values: PropertyValues) -> Self {
        Self { dims, values }
    }

    /// The number of values the dimensions call for (1 for a scalar); `None` if it overflows `u64`.
    pub fn expected_len(&self) -> Option<u64> {
        value_count(&self.dims)
    }

    /// Whether this would be written as a scalar.
    pub fn is_scalar(&self) -> bool {
        self.dims.is_empty()
    }
}

/// Product of the dimension lengths; 0 if any is 0 (even when the others would overflow).
fn value_count(dims: &[u32]) -> Option<u64> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
}

fn read_vec<'a, T>(
    r: &mut Reader<'a>,
    n: u64,
    size: usize,
    mut f: impl FnMut(&mut Reader<'a>) -> ReadResult<T>,
) -> ReadResult<Vec<T>> {
    let n = r.count(n, size, "property values")?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(f(r)?);
    }
    Ok(v)
}

fn read_bools(r: &mut Reader<'_>, scalar: bool, n: u64) -> ReadResult<Vec<bool>> {
    if scalar {
        let at = r.offset();
        return match r.u8()? {
            0 => Ok(vec![false]),
            1 => Ok(vec![true]),
            b => Err(r.invalid_at(at, format!("scalar bool is {b}, not 0 or 1"))),
        };
    }
    let nbytes = r.count(n.div_ceil(8), 1, "bool bitmap bytes")?;
    let bytes = r.bytes(nbytes)?;
    // n <= 8 * nbytes, and nbytes fits in memory.
    let n = usize::try_from(n).map_err(|_| r.invalid("bool array too large"))?;
    let mut out = Vec::with_capacity(n);
    out.extend((0..n).map(|i| bytes[i / 8] & (1 << (i % 8)) != 0));
    let used = n % 8;
    if let Some(&last) = bytes.last()
        && used != 0
        && last >> used != 0
    {
        return Err(r.invalid_at(r.offset() - 1, "unused bits of a bool bitmap are not 0"));
    }
    Ok(out)
}

impl Codec for PropertyData {
    fn read(r: &mut Reader<'_>, s: &StringTable<'_>) -> ReadResult<Self> {
        let at = r.offset();
        let ty = r.u8()?;
        if ty > 12 {
            return Err(r.invalid_at(at, format!("unknown property type {ty}")));
        }
        let ndims = r.u32()?;
        let ndims = r.count(ndims.into(), 4, "property dimensions")?;
        let mut dims = Vec::with_capacity(ndims);
        for _ in 0..ndims {
            dims.push(r.u32()?);
        }
        if ty == 0 {
            return Ok(Self { dims, values: PropertyValues::None });
        }
        let n = value_count(&dims).ok_or_else(|| r.invalid("property value count overflows 64 bits"))?;
        let values = match ty {
            1 => PropertyValues::Bool(read_bools(r, dims.is_empty(), n)?),
            2 => PropertyValues::I8(read_vec(r, n, 1, Reader::i8)?),
            3 => PropertyValues::I16(read_vec(r, n, 2, Reader::i16)?),
            4 => PropertyValues::I32(read_vec(r, n, 4, Reader::i32)?),
            5 => PropertyValues::I64(read_vec(r, n, 8, Reader::i64)?),
            6 => PropertyValues::U8(read_vec(r, n, 1, Reader::u8)?),
            7 => PropertyValues::U16(read_vec(r, n, 2, Reader::u16)?),
            8 => PropertyValues::U32(read_vec(r, n, 4, Reader::u32)?),
            9 => PropertyValues::U64(read_vec(r, n, 8, Reader::u64)?),
            10 => PropertyValues::F32(read_vec(r, n, 4, Reader::f32)?),
            11 => PropertyValues::F64(read_vec(r, n, 8, Reader::f64)?),
            _ => PropertyValues::Str(read_vec(r, n, 4, |r| s.read_str(r))?),
        };
        Ok(Self { dims, values })
    }

    fn write(&self, o: &mut Out<'_>) -> WriteResult<()> {
        let ndims = u32::try_from(self.dims.len())
            .map_err(|_| o.error(format!("property has {} dimensions, more than a u32 holds", self.dims.len())))?;
        if !matches!(self.values, PropertyValues::None) {
            let want = value_count(&self.dims)
                .ok_or_else(|| o.error(format!("property dimensions {:?} overflow the value count", self.dims)))?;
            let have = self.values.len();
            if have as u64 != want {
                return Err(o.error(format!(
                    "property of type {} has {have} values, but its dimensions {:?} call for {want}",
                    self.values.type_name(),
                    self.dims
                )));
            }
        }
        o.w.u8(self.values.type_id());
        o.w.u32(ndims);
        for &d in &self.dims {
            o.w.u32(d);
        }
        match &self.values {
            PropertyValues::None => {}
            PropertyValues::Bool(v) if self.dims.is_empty() => {
                for &b in v {
                    o.w.bool(b);
                }
            }
            PropertyValues::Bool(v) => {
                for chunk in v.chunks(8) {
                    let byte = chunk.iter().enumerate().fold(0u8, |acc, (i, &b)| acc | (u8::from(b) << i));
                    o.w.u8(byte);
                }
            }
            PropertyValues::I8(v) => v.iter().for_each(|&x| o.w.i8(x)),
            PropertyValues::I16(v) => v.iter().for_each(|&x| o.w.i16(x)),
            PropertyValues::I32(v) => v.iter().for_each(|&x| o.w.i32(x)),
            PropertyValues::I64(v) => v.iter().for_each(|&x| o.w.i64(x)),
            PropertyValues::U8(v) => o.w.bytes(v),
            PropertyValues::U16(v) => v.iter().for_each(|&x| o.w.u16(x)),
            PropertyValues::U32(v) => v.iter().for_each(|&x| o.w.u32(x)),
            PropertyValues::U64(v) => v.iter().for_each(|&x| o.w.u64(x)),
            PropertyValues::F32(v) => v.iter().for_each(|&x| o.w.f32(x)),
            PropertyValues::F64(v) => v.iter().for_each(|&x| o.w.f64(x)),
            PropertyValues::Str(v) => {
                for x in v {
                    o.str(x)?;
                }
            }
        }
        Ok(())
    }
}
