//! Flag bytes of the entity types. docs/spec/ENTITIES.md lists flag bits MSB → LSB; here every named bit is a
//! constant with its bit number (0 = LSB). Bits docs/spec/ENTITIES.md marks "0" have no name: they are written
//! as stored, which is 0 unless a file set them (kept so that reading and writing loses nothing).
//!
//! Bits that are not flags (the kind of an intersectable or a light, the pattern length of a light
//! controller) are not part of these types: they live in their own fields, and the writer refuses
//! flags that overlap them.

use super::codec::flags;

flags! {
    /// Generic entity (type 2): `{2×0, no collision, no inherit scale, no inherit rotation, follow
    /// bone tail, hidden, inactive}`.
    pub struct GenericFlags(u8) {
        NO_COLLISION, no_collision = 5;
        NO_INHERIT_SCALE, no_inherit_scale = 4;
        NO_INHERIT_ROTATION, no_inherit_rotation = 3;
        FOLLOW_BONE_TAIL, follow_bone_tail = 2;
        HIDDEN, hidden = 1;
        INACTIVE, inactive = 0;
    }
}

flags! {
    /// Prop (type 3): `{no animation loop, better physics, physics, no collision, no inherit scale,
    /// no inherit rotation, follow bone tail, hidden}`.
    pub struct PropFlags(u8) {
        NO_ANIMATION_LOOP, no_animation_loop = 7;
        BETTER_PHYSICS, better_physics = 6;
        PHYSICS, physics = 5;
        NO_COLLISION, no_collision = 4;
        NO_INHERIT_SCALE, no_inherit_scale = 3;
        NO_INHERIT_ROTATION, no_inherit_rotation = 2;
        FOLLOW_BONE_TAIL, follow_bone_tail = 1;
        HIDDEN, hidden = 0;
    }
}

flags! {
    /// Cube (type 4), a `u16`: `{2×0, show −Z −Y −X +Z +Y +X faces, 2×0, draw backfaces, no
    /// collision, no inherit scale, no inherit rotation, follow bone tail, hidden}`. The face bits
    /// are `8 + i` for face `i` in docs/spec/PMF-NOTES.md C5 order (+X = bit 8 … −Z = bit 13).
    pub struct CubeFlags(u16) {
        SHOW_NEG_Z, show_neg_z = 13;
        SHOW_NEG_Y, show_neg_y = 12;
        SHOW_NEG_X, show_neg_x = 11;
        SHOW_POS_Z, show_pos_z = 10;
        SHOW_POS_Y, show_pos_y = 9;
        SHOW_POS_X, show_pos_x = 8;
        DRAW_BACKFACES, draw_backfaces = 5;
        NO_COLLISION, no_collision = 4;
        NO_INHERIT_SCALE, no_inherit_scale = 3;
        NO_INHERIT_ROTATION, no_inherit_rotation = 2;
        FOLLOW_BONE_TAIL, follow_bone_tail = 1;
        HIDDEN, hidden = 0;
    }
}

flags! {
    /// Intersectable (type 5): the byte is `{4 bits kind; 3×0; follow bone tail}`; the kind
    /// (bits 7..4) is [`super::IntersectableShape`], not part of these flags.
    pub struct IntersectableFlags(u8) {
        FOLLOW_BONE_TAIL, follow_bone_tail = 0;
    }
}

flags! {
    /// Door (type 6), a `u16`: `{2×0, show −Z −Y −X +Z +Y +X faces, 2×0, no collision, no inherit
    /// scale, no inherit rotation, follow bone tail, draw backfaces, open}`. Face bits as for
    /// [`CubeFlags`].
    pub struct DoorFlags(u16) {
        SHOW_NEG_Z, show_neg_z = 13;
        SHOW_NEG_Y, show_neg_y = 12;
        SHOW_NEG_X, show_neg_x = 11;
        SHOW_POS_Z, show_pos_z = 10;
        SHOW_POS_Y, show_pos_y = 9;
        SHOW_POS_X, show_pos_x = 8;
        NO_COLLISION, no_collision = 5;
        NO_INHERIT_SCALE, no_inherit_scale = 4;
        NO_INHERIT_ROTATION, no_inherit_rotation = 3;
        FOLLOW_BONE_TAIL, follow_bone_tail = 2;
        DRAW_BACKFACES, draw_backfaces = 1;
        OPEN, open = 0;
    }
}

flags! {
    /// Trigger (type 7): `{continuous, mutual, replace initiator with self, team filter is
    /// blacklist, type filter is blacklist, enable type filter, follow bone tail, inactive}`.
    pub struct TriggerFlags(u8) {
        CONTINUOUS, continuous = 7;
        MUTUAL, mutual = 6;
        REPLACE_INITIATOR, replace_initiator = 5;
        TEAM_BLACKLIST, team_blacklist = 4;
        TYPE_BLACKLIST, type_blacklist = 3;
        TYPE_FILTER, type_filter = 2;
        FOLLOW_BONE_TAIL, follow_bone_tail = 1;
        INACTIVE, inactive = 0;
    }
}

flags! {
    /// Light (type 8): the byte is `{2×0, follow bone tail, inactive, 4 bits kind}`; the kind
    /// (bits 3..0) is [`super::LightKind`], not part of these flags.
    pub struct LightFlags(u8) {
        FOLLOW_BONE_TAIL, follow_bone_tail = 5;
        INACTIVE, inactive = 4;
    }
}

flags! {
    /// Glow (type 12): `{7×0, follow bone tail}`.
    pub struct GlowFlags(u8) {
        FOLLOW_BONE_TAIL, follow_bone_tail = 0;
    }
}

flags! {
    /// Text (type 13): `{3×0, escape codes, vertical center, horizontal center, follow bone tail,
    /// hidden}`.
    pub struct TextFlags(u8) {
        ESCAPE_CODES, escape_codes = 4;
        VERTICAL_CENTER, vertical_center = 3;
        HORIZONTAL_CENTER, horizontal_center = 2;
        FOLLOW_BONE_TAIL, follow_bone_tail = 1;
        HIDDEN, hidden = 0;
    }
}

flags! {
    /// Billboard (type 14): `{6×0, follow bone tail, hidden}`.
    pub struct BillboardFlags(u8) {
        FOLLOW_BONE_TAIL, follow_bone_tail = 1;
        HIDDEN, hidden = 0;
    }
}

flags! {
    /// Projectile (type 16): `{7×0, replace initiator on hit}`.
    pub struct ProjectileFlags(u8) {
        REPLACE_INITIATOR_ON_HIT, replace_initiator_on_hit = 0;
    }
}

flags! {
    /// Push (type 17): `{direction from position, team blacklist, type blacklist, type filter,
    /// cubic radius, delete after activation, follow bone tail, inactive}`.
    pub struct PushFlags(u8) {
        DIRECTION_FROM_POSITION, direction_from_position = 7;
        TEAM_BLACKLIST, team_blacklist = 6;
        TYPE_BLACKLIST, type_blacklist = 5;
        TYPE_FILTER, type_filter = 4;
        CUBIC_RADIUS, cubic_radius = 3;
        DELETE_AFTER_ACTIVATION, delete_after_activation = 2;
        FOLLOW_BONE_TAIL, follow_bone_tail = 1;
        INACTIVE, inactive = 0;
    }
}

flags! {
    /// Broadcaster (type 18): `{2×0, replace initiator for output 2, for output 1, team blacklist,
    /// type blacklist, type filter, inactive}`.
    pub struct BroadcasterFlags(u8) {
        REPLACE_INITIATOR_OUTPUT_2, replace_initiator_output_2 = 5;
        REPLACE_INITIATOR_OUTPUT_1, replace_initiator_output_1 = 4;
        TEAM_BLACKLIST, team_blacklist = 3;
        TYPE_BLACKLIST, type_blacklist = 2;
        TYPE_FILTER, type_filter = 1;
        INACTIVE, inactive = 0;
    }
}

flags! {
    /// Setter (type 23): `{7×0, multiply by tick time}`.
    pub struct SetterFlags(u8) {
        MULTIPLY_BY_TICK_TIME, multiply_by_tick_time = 0;
    }
}

flags! {
    /// Audio emitter (type 24): `{3×0, no doppler, cubic radius, wrap, loop, follow bone tail}`.
    pub struct AudioEmitterFlags(u8) {
        NO_DOPPLER, no_doppler = 4;
        CUBIC_RADIUS, cubic_radius = 3;
        WRAP, wrap = 2;
        LOOP, looping = 1;
        FOLLOW_BONE_TAIL, follow_bone_tail = 0;
    }
}

flags! {
    /// Dynamic light controller (type 25): the byte is `{2×0, advance while off, 5 bits pattern
    /// length − 1}`; the pattern length (bits 4..0) is its own field.
    pub struct DynLightCtlFlags(u8) {
        ADVANCE_WHILE_OFF, advance_while_off = 5;
    }
}

flags! {
    /// Fast light controller (type 26): the byte is `{0, no interpolation, advance while off,
    /// 5 bits pattern length − 1}`; the pattern length (bits 4..0) is its own field.
    pub struct FastLightCtlFlags(u8) {
        NO_INTERPOLATION, no_interpolation = 6;
        ADVANCE_WHILE_OFF, advance_while_off = 5;
    }
}
