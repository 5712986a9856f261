//! Helpers the library, environment, level and inspector panels share: the options of their
//! combos (records of a kind, "(none)" first) and who uses a record.

use pmfedit_core::edit::LibRef;
use pmfedit_core::map::Map;
use pmfedit_core::map::library::{EnvKind, EnvRef, Library, LibraryId, MaterialId, Named};

/// Every environment of a kind, for combos.
pub fn env_options(lib: &Library, kind: EnvKind) -> Vec<(EnvRef, String)> {
    match kind {
        EnvKind::Sound => lib.sound_environments().iter().map(|(i, e)| (EnvRef::Sound(i), e.name.clone())).collect(),
        EnvKind::Weather => {
            lib.weather_environments().iter().map(|(i, e)| (EnvRef::Weather(i), e.name.clone())).collect()
        }
        EnvKind::Sky => lib.sky_environments().iter().map(|(i, e)| (EnvRef::Sky(i), e.name.clone())).collect(),
        EnvKind::Gravity => {
            lib.gravity_environments().iter().map(|(i, e)| (EnvRef::Gravity(i), e.name.clone())).collect()
        }
    }
}

/// Title-case name of a kind.
pub fn kind_label(kind: EnvKind) -> &'static str {
    match kind {
        EnvKind::Sound => "Sound",
        EnvKind::Weather => "Weather",
        EnvKind::Sky => "Sky",
        EnvKind::Gravity => "Gravity",
    }
}

/// Who uses a record, in words (empty when nobody does).
pub fn users(map: &Map, id: LibRef) -> String {
    let lib = &map.library;
    let (outside, referrers) = match id {
        LibRef::Material(m) => (map.material_in_use(m).then_some("cubes"), lib.referrers(m)),
        LibRef::Physics(p) => (map.physics_material_in_use(p).then_some("cubes or air settings"), lib.referrers(p)),
        LibRef::Sound(s) => (map.sound_material_in_use(s).then_some("cubes"), lib.referrers(s)),
        LibRef::Environment(e) => (map.environment_in_use(e).then_some("regions or level defaults"), Vec::new()),
    };
    let mut out: Vec<String> = outside.map(str::to_owned).into_iter().collect();
    out.extend(referrers.iter().map(|r| lib.describe(r)));
    out.join(", ")
}

/// Options for a combo of every record of a table.
pub fn options<I: LibraryId>(lib: &Library) -> Vec<(I, String)>
where
    I::Item: Named,
{
    lib.table::<I::Item>().iter().map(|(id, item)| (id, item.name().to_owned())).collect()
}

/// Options with a "(none)" entry first.
pub fn optional<I: Copy>(opts: Vec<(I, String)>) -> Vec<(Option<I>, String)> {
    std::iter::once((None, "(none)".to_owned())).chain(opts.into_iter().map(|(i, n)| (Some(i), n))).collect()
}

/// Material options (for sky slots and the replacement combo).
pub fn material_options(lib: &Library) -> Vec<(MaterialId, String)> {
    options::<MaterialId>(lib)
}
