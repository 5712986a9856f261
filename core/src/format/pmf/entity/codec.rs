//! The field codec shared by every entity type: one trait, [`Codec`], implemented for the primitive
//! field types of docs/spec/ENTITIES.md, plus the `record!` macro that defines a type's struct and
//! its reader/writer from one field list, so that read order and write order cannot drift apart
//! (flag types get theirs from `flags!` in `flags.rs`).

use crate::format::bin::{ReadResult, Reader, Writer};
use crate::format::pmf::error::{WriteError, WriteResult};
use crate::format::pmf::strings::{StringTable, StringTableBuilder};

/// Where the writer puts bytes and strings.
///
/// The entity writer runs every record twice: first as a dry run (`strings` is `None`, offsets are
/// written as 0 into a scratch buffer) that does every check, then for real. So a refused entity
/// leaves neither bytes in the output nor strings in the table.
pub(crate) struct Out<'a> {
    pub(crate) w: &'a mut Writer,
    pub(crate) strings: Option<&'a mut StringTableBuilder>,
    /// Names the entity in errors, e.g. `entity 3 (prop "crate")`.
    pub(crate) context: &'a str,
}

impl Out<'_> {
    pub(crate) fn error(&self, reason: impl Into<String>) -> WriteError {
        WriteError::new(self.context, reason)
    }

    /// Writes a `String` field: a `u32` offset into the section's table. Refuses interior NULs,
    /// which the table format cannot represent.
    pub(crate) fn str(&mut self, s: &str) -> WriteResult<()> {
        if s.as_bytes().contains(&0) {
            return Err(self.error(format!("string {s:?} contains a NUL byte")));
        }
        match self.strings.as_deref_mut() {
            Some(b) => b.write_str(self.w, s),
            None => self.w.u32(0),
        }
        Ok(())
    }
}

/// A field that can be read from and written to an entity record.
pub(crate) trait Codec: Sized {
    fn read(r: &mut Reader<'_>, s: &StringTable<'_>) -> ReadResult<Self>;
    fn write(&self, o: &mut Out<'_>) -> WriteResult<()>;
}

macro_rules! primitive_codec {
    ($($ty:ty => $m:ident),* $(,)?) => {$(
        impl Codec for $ty {
            fn read(r: &mut Reader<'_>, _: &StringTable<'_>) -> ReadResult<Self> {
                r.$m()
            }
            fn write(&self, o: &mut Out<'_>) -> WriteResult<()> {
                o.w.$m(*self);
                Ok(())
            }
        }
    )*};
}

primitive_codec!(u8 => u8, u16 => u16, u32 => u32, u64 => u64, i64 => i64, f32 => f32);

impl Codec for String {
    fn read(r: &mut Reader<'_>, s: &StringTable<'_>) -> ReadResult<Self> {
        s.read_str(r)
    }
    fn write(&self, o: &mut Out<'_>) -> WriteResult<()> {
        o.str(self)
    }
}

impl<T: Codec + Default, const N: usize> Codec for [T; N] {
    fn read(r: &mut Reader<'_>, s: &StringTable<'_>) -> ReadResult<Self> {
        let mut out: [T; N] = std::array::from_fn(|_| T::default());
        for v in &mut out {
            *v = T::read(r, s)?;
        }
        Ok(out)
    }
    fn write(&self, o: &mut Out<'_>) -> WriteResult<()> {
        for v in self {
            v.write(o)?;
        }
        Ok(())
    }
}

/// Defines a type-data struct whose fields are read and written in declaration order.
macro_rules! record {
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            $( $(#[$fm:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
        pub struct $name {
            $( $(#[$fm])* pub $field: $ty, )*
        }

        impl $crate::format::pmf::entity::codec::Codec for $name {
            fn read(
                r: &mut $crate::format::bin::Reader<'_>,
                s: &$crate::format::pmf::strings::StringTable<'_>,
            ) -> $crate::format::bin::ReadResult<Self> {
                Ok(Self { $( $field: <$ty as $crate::format::pmf::entity::codec::Codec>::read(r, s)?, )* })
            }
            fn write(
                &self,
                o: &mut $crate::format::pmf::entity::codec::Out<'_>,
            ) -> $crate::format::pmf::error::WriteResult<()> {
                $( $crate::format::pmf::entity::codec::Codec::write(&self.$field, o)?; )*
                Ok(())
            }
        }

        #[cfg(test)]
        impl $crate::format::pmf::entity::arb::Arb for $name {
            fn arb() -> proptest::strategy::BoxedStrategy<Self> {
                #[allow(unused_imports)]
                use proptest::strategy::Strategy as _;
                let s = proptest::strategy::Just(Self::default()).boxed();
                $(
                    let s = (s, <$ty as $crate::format::pmf::entity::arb::Arb>::arb())
                        .prop_map(|(mut v, f)| {
                            v.$field = f;
                            v
                        })
                        .boxed();
                )*
                s
            }
        }
    };
}

pub(crate) use record;
