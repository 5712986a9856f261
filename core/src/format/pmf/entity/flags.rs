//! Flag bytes of the entity types. docs/spec/ENTITIES.md lists flag bits MSB → LSB; here every named bit is a
//! constant with its bit number (0 = LSB). Bits docs/spec/ENTITIES.md marks "0" have no name: they are written
//! as stored, which is 0 unless a file set them (kept so that reading and writing loses nothing).
//!
//! Bits that are not flags (the kind of an intersectable or a light, the pattern length of a light
//! controller) are not part of these types: they live in their own fields, and the writer refuses
//! flags that overlap them.

/// One named bit of a flags type, from its [`NAMED`](GenericFlags::NAMED) table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlagBit {
    /// The constant's name, e.g. `"NO_COLLISION"`.
    pub name: &'static str,
    /// What a form shows, e.g. `"no collision"`.
    pub label: &'static str,
    /// Bit number (0 = least significant).
    pub bit: u8,
}

/// Defines a flag byte (or word) as a newtype over the raw bits, with a named constant, a named
/// getter and a [`FlagBit`] table entry (with a human label) per bit of docs/spec/ENTITIES.md. The
/// raw bits are kept as read, reserved bits included, so that nothing is lost on a round trip;
/// values built through the named API have reserved bits 0.
macro_rules! flags {
    (
        $(#[$m:meta])*
        pub struct $name:ident($raw:ty) {
            $( $(#[$fm:meta])* $konst:ident, $getter:ident = $bit:literal, $label:literal; )*
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
        pub struct $name(pub $raw);

        impl $name {
            $( $(#[$fm])* pub const $konst: Self = Self(1 << $bit); )*
            /// Every bit that has a name in docs/spec/ENTITIES.md.
            pub const KNOWN: Self = Self(0 $( | (1 << $bit) )*);
            /// The named bits, in docs/spec/ENTITIES.md order (most significant first): what a
            /// form lists as checkboxes.
            pub const NAMED: &'static [FlagBit] = &[
                $( FlagBit { name: stringify!($konst), label: $label, bit: $bit }, )*
            ];
            /// The constant and the getter of each [`Self::NAMED`] entry, in the same order, so
            /// that tests can check the table against the typed API.
            #[cfg(test)]
            pub(crate) const TYPED: &'static [(Self, fn(Self) -> bool)] = &[ $( (Self::$konst, Self::$getter), )* ];

            /// No bit set.
            pub const fn empty() -> Self {
                Self(0)
            }
            /// The raw bits.
            pub const fn bits(self) -> $raw {
                self.0
            }
            /// Flags from raw bits, unknown bits kept.
            pub const fn from_bits_retain(bits: $raw) -> Self {
                Self(bits)
            }
            /// Whether every bit of `other` is set.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }
            /// `self` with the bits of `other` set.
            #[must_use]
            pub const fn with(self, other: Self) -> Self {
                Self(self.0 | other.0)
            }
            /// Sets or clears the bits of `other`.
            pub fn set(&mut self, other: Self, on: bool) {
                if on {
                    self.0 |= other.0;
                } else {
                    self.0 &= !other.0;
                }
            }
            /// The bits set that have no name (reserved "0" bits of docs/spec/ENTITIES.md).
            pub const fn reserved_bits(self) -> $raw {
                self.0 & !Self::KNOWN.0
            }
            $(
                #[doc = concat!("Whether [`Self::", stringify!($konst), "`] is set.")]
                pub const fn $getter(self) -> bool {
                    self.contains(Self::$konst)
                }
            )*
        }

        impl std::ops::BitOr for $name {
            type Output = Self;
            fn bitor(self, rhs: Self) -> Self {
                Self(self.0 | rhs.0)
            }
        }

        impl $crate::format::pmf::entity::codec::Codec for $name {
            fn read(
                r: &mut $crate::format::bin::Reader<'_>,
                s: &$crate::format::pmf::strings::StringTable<'_>,
            ) -> $crate::format::bin::ReadResult<Self> {
                <$raw as $crate::format::pmf::entity::codec::Codec>::read(r, s).map(Self)
            }
            fn write(
                &self,
                o: &mut $crate::format::pmf::entity::codec::Out<'_>,
            ) -> $crate::format::pmf::error::WriteResult<()> {
                $crate::format::pmf::entity::codec::Codec::write(&self.0, o)
            }
        }

        #[cfg(test)]
        impl $crate::format::pmf::entity::arb::Arb for $name {
            fn arb() -> proptest::strategy::BoxedStrategy<Self> {
                use proptest::strategy::Strategy as _;
                proptest::arbitrary::any::<$raw>().prop_map(Self).boxed()
            }
        }
    };
}

flags! {
    /// Generic entity (type 2): `{2×0, no collision, no inherit scale, no inherit rotation, follow
    /// bone tail, hidden, inactive}`.
    pub struct GenericFlags(u8) {
        NO_COLLISION, no_collision = 5, "no collision";
        NO_INHERIT_SCALE, no_inherit_scale = 4, "no inherit scale";
        NO_INHERIT_ROTATION, no_inherit_rotation = 3, "no inherit rotation";
        FOLLOW_BONE_TAIL, follow_bone_tail = 2, "follow bone tail";
        HIDDEN, hidden = 1, "hidden";
        INACTIVE, inactive = 0, "inactive";
    }
}

flags! {
    /// Prop (type 3): `{no animation loop, better physics, physics, no collision, no inherit scale,
    /// no inherit rotation, follow bone tail, hidden}`.
    pub struct PropFlags(u8) {
        NO_ANIMATION_LOOP, no_animation_loop = 7, "no animation loop";
        BETTER_PHYSICS, better_physics = 6, "better physics";
        PHYSICS, physics = 5, "physics";
        NO_COLLISION, no_collision = 4, "no collision";
        NO_INHERIT_SCALE, no_inherit_scale = 3, "no inherit scale";
        NO_INHERIT_ROTATION, no_inherit_rotation = 2, "no inherit rotation";
        FOLLOW_BONE_TAIL, follow_bone_tail = 1, "follow bone tail";
        HIDDEN, hidden = 0, "hidden";
    }
}

flags! {
    /// Cube (type 4), a `u16`: `{2×0, show −Z −Y −X +Z +Y +X faces, 2×0, draw backfaces, no
    /// collision, no inherit scale, no inherit rotation, follow bone tail, hidden}`. The face bits
    /// are `8 + i` for face `i` in docs/spec/PMF-NOTES.md C5 order (+X = bit 8 … −Z = bit 13).
    pub struct CubeFlags(u16) {
        SHOW_NEG_Z, show_neg_z = 13, "show −Z face";
        SHOW_NEG_Y, show_neg_y = 12, "show −Y face";
        SHOW_NEG_X, show_neg_x = 11, "show −X face";
        SHOW_POS_Z, show_pos_z = 10, "show +Z face";
        SHOW_POS_Y, show_pos_y = 9, "show +Y face";
        SHOW_POS_X, show_pos_x = 8, "show +X face";
        DRAW_BACKFACES, draw_backfaces = 5, "draw backfaces";
        NO_COLLISION, no_collision = 4, "no collision";
        NO_INHERIT_SCALE, no_inherit_scale = 3, "no inherit scale";
        NO_INHERIT_ROTATION, no_inherit_rotation = 2, "no inherit rotation";
        FOLLOW_BONE_TAIL, follow_bone_tail = 1, "follow bone tail";
        HIDDEN, hidden = 0, "hidden";
    }
}

flags! {
    /// Intersectable (type 5): the byte is `{4 bits kind; 3×0; follow bone tail}`; the kind
    /// (bits 7..4) is [`super::IntersectableShape`], not part of these flags.
    pub struct IntersectableFlags(u8) {
        FOLLOW_BONE_TAIL, follow_bone_tail = 0, "follow bone tail";
    }
}

flags! {
    /// Door (type 6), a `u16`: `{2×0, show −Z −Y −X +Z +Y +X faces, 2×0, no collision, no inherit
    /// scale, no inherit rotation, follow bone tail, draw backfaces, open}`. Face bits as for
    /// [`CubeFlags`].
    pub struct DoorFlags(u16) {
        SHOW_NEG_Z, show_neg_z = 13, "show −Z face";
        SHOW_NEG_Y, show_neg_y = 12, "show −Y face";
        SHOW_NEG_X, show_neg_x = 11, "show −X face";
        SHOW_POS_Z, show_pos_z = 10, "show +Z face";
        SHOW_POS_Y, show_pos_y = 9, "show +Y face";
        SHOW_POS_X, show_pos_x = 8, "show +X face";
        NO_COLLISION, no_collision = 5, "no collision";
        NO_INHERIT_SCALE, no_inherit_scale = 4, "no inherit scale";
        NO_INHERIT_ROTATION, no_inherit_rotation = 3, "no inherit rotation";
        FOLLOW_BONE_TAIL, follow_bone_tail = 2, "follow bone tail";
        DRAW_BACKFACES, draw_backfaces = 1, "draw backfaces";
        OPEN, open = 0, "open";
    }
}

flags! {
    /// Trigger (type 7): `{continuous, mutual, replace initiator with self, team filter is
    /// blacklist, type filter is blacklist, enable type filter, follow bone tail, inactive}`.
    pub struct TriggerFlags(u8) {
        CONTINUOUS, continuous = 7, "continuous";
        MUTUAL, mutual = 6, "mutual";
        REPLACE_INITIATOR, replace_initiator = 5, "replace initiator";
        TEAM_BLACKLIST, team_blacklist = 4, "team blacklist";
        TYPE_BLACKLIST, type_blacklist = 3, "type blacklist";
        TYPE_FILTER, type_filter = 2, "type filter";
        FOLLOW_BONE_TAIL, follow_bone_tail = 1, "follow bone tail";
        INACTIVE, inactive = 0, "inactive";
    }
}

flags! {
    /// Light (type 8): the byte is `{2×0, follow bone tail, inactive, 4 bits kind}`; the kind
    /// (bits 3..0) is [`super::LightKind`], not part of these flags.
    pub struct LightFlags(u8) {
        FOLLOW_BONE_TAIL, follow_bone_tail = 5, "follow bone tail";
        INACTIVE, inactive = 4, "inactive";
    }
}

flags! {
    /// Glow (type 12): `{7×0, follow bone tail}`.
    pub struct GlowFlags(u8) {
        FOLLOW_BONE_TAIL, follow_bone_tail = 0, "follow bone tail";
    }
}

flags! {
    /// Text (type 13): `{3×0, escape codes, vertical center, horizontal center, follow bone tail,
    /// hidden}`.
    pub struct TextFlags(u8) {
        ESCAPE_CODES, escape_codes = 4, "escape codes";
        VERTICAL_CENTER, vertical_center = 3, "vertical center";
        HORIZONTAL_CENTER, horizontal_center = 2, "horizontal center";
        FOLLOW_BONE_TAIL, follow_bone_tail = 1, "follow bone tail";
        HIDDEN, hidden = 0, "hidden";
    }
}

flags! {
    /// Billboard (type 14): `{6×0, follow bone tail, hidden}`.
    pub struct BillboardFlags(u8) {
        FOLLOW_BONE_TAIL, follow_bone_tail = 1, "follow bone tail";
        HIDDEN, hidden = 0, "hidden";
    }
}

flags! {
    /// Projectile (type 16): `{7×0, replace initiator on hit}`.
    pub struct ProjectileFlags(u8) {
        REPLACE_INITIATOR_ON_HIT, replace_initiator_on_hit = 0, "replace initiator on hit";
    }
}

flags! {
    /// Push (type 17): `{direction from position, team blacklist, type blacklist, type filter,
    /// cubic radius, delete after activation, follow bone tail, inactive}`.
    pub struct PushFlags(u8) {
        DIRECTION_FROM_POSITION, direction_from_position = 7, "direction from position";
        TEAM_BLACKLIST, team_blacklist = 6, "team blacklist";
        TYPE_BLACKLIST, type_blacklist = 5, "type blacklist";
        TYPE_FILTER, type_filter = 4, "type filter";
        CUBIC_RADIUS, cubic_radius = 3, "cubic radius";
        DELETE_AFTER_ACTIVATION, delete_after_activation = 2, "delete after activation";
        FOLLOW_BONE_TAIL, follow_bone_tail = 1, "follow bone tail";
        INACTIVE, inactive = 0, "inactive";
    }
}

flags! {
    /// Broadcaster (type 18): `{2×0, replace initiator for output 2, for output 1, team blacklist,
    /// type blacklist, type filter, inactive}`.
    pub struct BroadcasterFlags(u8) {
        REPLACE_INITIATOR_OUTPUT_2, replace_initiator_output_2 = 5, "replace initiator output 2";
        REPLACE_INITIATOR_OUTPUT_1, replace_initiator_output_1 = 4, "replace initiator output 1";
        TEAM_BLACKLIST, team_blacklist = 3, "team blacklist";
        TYPE_BLACKLIST, type_blacklist = 2, "type blacklist";
        TYPE_FILTER, type_filter = 1, "type filter";
        INACTIVE, inactive = 0, "inactive";
    }
}

flags! {
    /// Setter (type 23): `{7×0, multiply by tick time}`.
    pub struct SetterFlags(u8) {
        MULTIPLY_BY_TICK_TIME, multiply_by_tick_time = 0, "multiply by tick time";
    }
}

flags! {
    /// Audio emitter (type 24): `{3×0, no doppler, cubic radius, wrap, loop, follow bone tail}`.
    pub struct AudioEmitterFlags(u8) {
        NO_DOPPLER, no_doppler = 4, "no doppler";
        CUBIC_RADIUS, cubic_radius = 3, "cubic radius";
        WRAP, wrap = 2, "wrap";
        LOOP, looping = 1, "loop";
        FOLLOW_BONE_TAIL, follow_bone_tail = 0, "follow bone tail";
    }
}

flags! {
    /// Dynamic light controller (type 25): the byte is `{2×0, advance while off, 5 bits pattern
    /// length − 1}`; the pattern length (bits 4..0) is its own field.
    pub struct DynLightCtlFlags(u8) {
        ADVANCE_WHILE_OFF, advance_while_off = 5, "advance while off";
    }
}

flags! {
    /// Fast light controller (type 26): the byte is `{0, no interpolation, advance while off,
    /// 5 bits pattern length − 1}`; the pattern length (bits 4..0) is its own field.
    pub struct FastLightCtlFlags(u8) {
        NO_INTERPOLATION, no_interpolation = 6, "no interpolation";
        ADVANCE_WHILE_OFF, advance_while_off = 5, "advance while off";
    }
}
