//! Test support: [`Arb`], the proptest strategy per field type that `record!` and `flags!` derive
//! for their types, with its implementations for the primitive field types. (The entity types'
//! own implementations are in `tests.rs`.)

use proptest::collection::vec;
use proptest::prelude::*;

/// A strategy per field type; `record!` and `flags!` derive it for their types.
pub(crate) trait Arb: Sized + std::fmt::Debug + Clone + 'static {
    /// Any value of the type.
    fn arb() -> BoxedStrategy<Self>;
}

macro_rules! arb_any {
    ($($t:ty),*) => {$(
        impl Arb for $t {
            fn arb() -> BoxedStrategy<Self> {
                any::<$t>().boxed()
            }
        }
    )*};
}

arb_any!(bool, u8, u16, u32, u64, i8, i16, i32, i64);

impl Arb for f32 {
    fn arb() -> BoxedStrategy<Self> {
        use proptest::num::f32;
        (f32::POSITIVE | f32::NEGATIVE | f32::NORMAL | f32::SUBNORMAL | f32::ZERO).boxed()
    }
}

impl Arb for f64 {
    fn arb() -> BoxedStrategy<Self> {
        use proptest::num::f64;
        (f64::POSITIVE | f64::NEGATIVE | f64::NORMAL | f64::SUBNORMAL | f64::ZERO).boxed()
    }
}

impl Arb for String {
    fn arb() -> BoxedStrategy<Self> {
        "[a-z0-9_ ./:é]{0,6}".boxed()
    }
}

impl<T: Arb, const N: usize> Arb for [T; N] {
    fn arb() -> BoxedStrategy<Self> {
        vec(T::arb(), N).prop_map(|v| std::array::from_fn(|i| v[i].clone())).boxed()
    }
}
