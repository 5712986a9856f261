//! The golden PMF cases: each is a small `File` built here, written by the PMF writer into
//! `tests/golden/pmf/<case>/<case>.pmf`, with a `README.md` holding the description.

use pmfedit_core::format::pmf::{Chunk, level_flags};
use pmfedit_core::format::pmf::{
    ChunkIndex, ClientDynamicLight, ClientExtGeometryCube, ClientFastLight, ClientGeometry, ClientMaterial, CubeKind,
    CubeLighting, DynamicLight, EnvironmentRegion, ExtGeometryCube, FastLight, FastLightRange, File, GeometryCube,
    GravityEnvironment, GridSize, Header, Level, LevelClient, LevelCommon, LightRef, Lightmap, LightmapLayer, Material,
    MovedPoints, PathAttribute, PhysicsMaterial, Region, RenderMode, ServerCube, SkyEnvironment, SoundEnvironment,
    SoundMaterial, Vertex, Visibility, VisibleChunk, WaveInfo, WeatherEnvironment, light_flags, material_flags,
    physics_flags, sky_flags,
};

use crate::tree::{Node, child_sign, chunk_blocks, face_quad, geometry_faces};

/// One golden case.
pub struct Case {
    pub name: &'static str,
    pub description: &'static str,
    pub file: File,
}

/// Fixed creation time of every golden file.
pub const TIME: u64 = 1_700_000_000;

/// All golden cases, in a stable order.
pub fn cases() -> Vec<Case> {
    vec![
        case("all_air", "One level of one chunk holding a single empty root cube; no libraries.", all_air()),
        case(
            "nested_parents",
            "Parent cubes nested four deep with empty and geometry leaves (docs/spec/PMF-NOTES.md C1/C2).",
            nested_parents(),
        ),
        case(
            "geometry",
            "Geometry cubes with face quads and an extended-geometry cube with three moved corners and per-face materials (C4, G2, G3).",
            geometry(),
        ),
        case(
            "lightmaps",
            "Two lightmaps of different sizes (2×2 and 8×8) referenced by geometry faces (K1).",
            lightmaps(),
        ),
        case(
            "dynamic_fast_lights",
            "Dynamic lights with lightmap layers and fast lights with vertex ranges, plus light references in air cube lighting data (K3, K4).",
            dynamic_fast_lights(),
        ),
        case(
            "visibility",
            "Visibility data on air cubes listing cubes in the same chunk and in other chunks, including the 0 = all form (V1).",
            visibility(),
        ),
        case("pathfinding", "Pathfinding attributes (`walk` and user-defined) on air cubes (P1).", pathfinding()),
        case(
            "environment_regions",
            "Sound, weather, sky and gravity environments with one region of each kind and level defaults (R1).",
            environment_regions(),
        ),
        case("load_regions", "Load regions with lists of other active chunks.", load_regions()),
        case(
            "grid_3x2x4",
            "A 3×2×4 (X×Y×Z) chunk grid with a non-zero center chunk and a cube in some chunks (L3, L4).",
            grid_3x2x4(),
        ),
        case("two_levels", "Two levels with different chunk sizes, flags and libraries.", two_levels()),
        case(
            "archive",
            "An embedded PAF archive with nested folders (textures/walls, scripts), a PTF texture converted from a generated image, a script and a link, referenced by a material as map:textures/walls/brick (T1, PTF T3).",
            archive(),
        ),
        case(
            "entities",
            "Global, level-wide and chunk entities of several types (prop, light, trigger, text, audio emitter, counter, an opaque beam) with custom properties of scalar, array, bool-bitmap and string types, and gamemode masks (E1).",
            entities(),
        ),
    ]
}

fn case(name: &'static str, description: &'static str, file: File) -> Case {
    Case { name, description, file }
}

fn header(name: &str) -> Header {
    Header {
        creation_time: TIME,
        name: name.to_owned(),
        description: format!("pmfedit golden case {name}"),
        authors: "pmfedit tests".to_owned(),
        compiler_info: "pmfedit golden builder".to_owned(),
        gamemodes: vec!["deathmatch".to_owned(), "coop".to_owned()],
    }
}

fn file(name: &str, levels: Vec<Level>) -> File {
    File { header: header(name), levels, ..File::default() }
}

/// A level library with a few materials (one transparent, one liquid), physics and sound materials.
fn library() -> (LevelCommon, LevelClient) {
    let mat = |name: &str, flags: u8| Material {
        name: name.to_owned(),
        user_type: if flags & material_flags::LIQUID != 0 { "liquid" } else { "solid" }.to_owned(),
        flags,
        render_mode: RenderMode::Normal,
    };
    let cmat = |texture: &str, color: [u8; 3]| ClientMaterial {
        texture: texture.to_owned(),
        color,
        alpha: 255,
        shading: 128,
        ..ClientMaterial::default()
    };
    let common = LevelCommon {
        materials: vec![
            mat("stone", 0),
            mat("grass", 0),
            mat("glass", material_flags::TRANSPARENT),
            mat("water", material_flags::TRANSPARENT | material_flags::LIQUID),
        ],
        physics_materials: vec![
            PhysicsMaterial {
                name: "rock".to_owned(),
                flags: 0,
                friction_or_max_speed: 0.8,
                traction: 1.0,
                bounce: 0.1,
                damage_min_speed: 12.0,
                damage_base: 5.0,
                damage_per_mps: 1.5,
            },
            PhysicsMaterial {
                name: "water".to_owned(),
                flags: physics_flags::NOT_SOLID,
                friction_or_max_speed: 3.0,
                ..PhysicsMaterial::default()
            },
        ],
        sound_materials: vec![
            SoundMaterial { volume_dampening: 0.2, frequency_dampening: 0.1 },
            SoundMaterial { volume_dampening: 0.7, frequency_dampening: 0.5 },
        ],
        air_physics_material: String::new(),
        ..LevelCommon::default()
    };
    let mut water = cmat("map:textures/water", [40, 80, 200]);
    water.alpha = 160;
    water.wave = WaveInfo { velocity: [0.5, 0.0, 0.25], wind_influence: 0.3, offset: 0.1, scale: 2.0 };
    water.uv_scroll = [0.01, 0.02];
    let mut glass = cmat("map:textures/glass", [200, 220, 255]);
    glass.alpha = 90;
    glass.shine = 200;
    glass.matcap_texture = "map:textures/glass_matcap".to_owned();
    let mut grass = cmat("map:textures/grass", [60, 160, 60]);
    grass.extra_textures = vec!["map:textures/grass_1".to_owned(), "map:textures/grass_2".to_owned()];
    grass.texture_advance_time_us = 250_000;
    grass.emission = [0, 4, 0];
    let client = LevelClient {
        materials: vec![cmat("map:textures/stone", [128, 128, 128]), grass, glass, water],
        ..LevelClient::default()
    };
    (common, client)
}

/// A one-chunk level (chunk edge 2^`exp`) built from `root`, with the standard library.
fn one_chunk_level(exp: u8, chunk: Chunk) -> Level {
    let (common, client) = library();
    Level { common, client, chunk_size_exp: exp, chunks: vec![chunk], ..Level::default() }
}

fn chunk(root: Node) -> Chunk {
    let (common, client, server) = chunk_blocks(root);
    Chunk { common, client, server }
}

/// Uses the first `m` materials and the level's physics/sound materials.
fn use_materials(c: &mut Chunk, m: usize) {
    c.common.used_materials = ["stone", "grass", "glass", "water"][..m].iter().map(|s| s.to_string()).collect();
    c.common.used_physics_materials = vec!["rock".to_owned(), "water".to_owned()];
    c.common.used_sound_materials = vec!["0".to_owned(), "1".to_owned()];
}

fn geo(material: u8) -> CubeKind {
    CubeKind::Geometry(GeometryCube { material, physics_material: 0, sound_material: 0 })
}

/// Gives every geometry cube its face quads (all six faces) and appends the vertices to the chunk.
/// `root_edge` is the chunk edge. Cubes are visited in array order with their centers.
fn add_quads(c: &mut Chunk, root_edge: f32, lightmap: u8) {
    let mut centers = vec![([0.0f32; 3], root_edge); c.common.cubes.len()];
    for i in 0..c.common.cubes.len() {
        let (center, edge) = centers[i];
        match &c.common.cubes[i].kind {
            CubeKind::Parent(p) => {
                for (bit, child) in p.indices().into_iter().enumerate() {
                    if let Some(child) = child {
                        let s = child_sign(bit);
                        let q = edge / 4.0;
                        centers[child as usize] =
                            ([center[0] + s[0] * q, center[1] + s[1] * q, center[2] + s[2] * q], edge / 2.0);
                    }
                }
            }
            CubeKind::Geometry(_) => {
                let first = c.client.vertices.len() as u32;
                let (g, v) = geometry_faces(center, edge, 0b11_1111, first, lightmap);
                c.client.cubes[i].geometry = g;
                c.client.vertices.extend(v);
            }
            CubeKind::ExtGeometry(_) | CubeKind::Empty => {}
        }
    }
}

fn octants(f: impl Fn(usize) -> Option<Node>) -> [Option<Node>; 8] {
    std::array::from_fn(f)
}

fn all_air() -> File {
    file("all_air", vec![Level { chunks: vec![Chunk::default()], chunk_size_exp: 4, ..Level::default() }])
}

fn nested_parents() -> File {
    // Depth 4: root → octant 0 → octant 7 → octant 3 → leaves.
    let leaves = octants(|b| match b {
        0 => Some(Node::with_kind(geo(0))),
        5 => Some(Node::with_kind(geo(1))),
        6 => Some(Node::empty()),
        _ => None,
    });
    let d3 = Node::parent(octants(|b| (b == 3).then(|| Node::parent(leaves.clone()))));
    let d2 = Node::parent(octants(|b| match b {
        7 => Some(d3.clone()),
        1 => Some(Node::with_kind(geo(0))),
        _ => None,
    }));
    let root = Node::parent(octants(|b| match b {
        0 => Some(d2.clone()),
        4 => Some(Node::with_kind(geo(1))),
        _ => None,
    }));
    let mut c = chunk(root);
    use_materials(&mut c, 2);
    add_quads(&mut c, 16.0, 0);
    c.client.lightmaps = vec![Lightmap { size_exp: 0, luxels: vec![255, 255, 255] }];
    file("nested_parents", vec![one_chunk_level(4, c)])
}

fn geometry() -> File {
    let x = ExtGeometryCube {
        materials: [0, 1, 0, 1, 2, 0],
        physics_materials: [0, 0, 0, 0, 1, 0],
        sound_material: 1,
        points: MovedPoints::new([
            Some([4.0, 1.0, 4.0]),
            None,
            Some([4.0, -0.5, -4.0]),
            None,
            None,
            None,
            None,
            Some([-3.0, -4.0, -3.5]),
        ]),
    };
    let mut ext = Node::with_kind(CubeKind::ExtGeometry(x.clone()));
    ext.cube.draw_backfaces = true;
    let root = Node::parent(octants(|b| match b {
        0 | 4 => Some(Node::with_kind(geo(0))),
        5 => Some(Node::with_kind(geo(2))),
        3 => Some(ext.clone()),
        _ => None,
    }));
    let mut c = chunk(root);
    use_materials(&mut c, 3);
    add_quads(&mut c, 16.0, 0);
    // The extended cube (index 2 in pre-order: root, 0, 3, 4, 5; octant 3 of the 16-unit chunk:
    // center (−4, 4, −4), edge 8) gets two triangles per face: the face's quad with its corners
    // moved where the cube moves them.
    let ext_index = 2;
    assert!(matches!(c.common.cubes[ext_index].kind, CubeKind::ExtGeometry(_)));
    let first = c.client.vertices.len() as u32;
    c.client.vertices.extend(ext_faces([-4.0, 4.0, -4.0], 8.0, &x));
    c.client.cubes[ext_index].geometry = ClientGeometry::ExtGeometry(ClientExtGeometryCube {
        first_vertex: first,
        lightmaps: [0; 6],
        triangle_counts: [2; 6],
    });
    c.client.lightmaps = vec![Lightmap { size_exp: 1, luxels: (0..12).map(|i| 100 + i).collect() }];
    file("geometry", vec![one_chunk_level(4, c)])
}

/// The triangles of an extended-geometry cube: per face (face order), the axis-aligned quad of
/// [`face_quad`] with each corner replaced by the cube's moved point for it (C4), as two
/// triangles `(0, 1, 2)`, `(0, 2, 3)` (G3). Texture and lightmap UVs stay the quad's.
fn ext_faces(center: [f32; 3], edge: f32, x: &ExtGeometryCube) -> Vec<Vertex> {
    let mut out = Vec::new();
    for face in 0..6 {
        let quad = face_quad(center, edge, face).map(|mut v| {
            let d: [f32; 3] = std::array::from_fn(|k| v.position[k] - center[k]);
            let bit = usize::from(d[0] < 0.0) | usize::from(d[2] < 0.0) << 1 | usize::from(d[1] < 0.0) << 2;
            if let Some(p) = x.points.get(bit) {
                v.position = std::array::from_fn(|k| center[k] + p[k]);
            }
            v
        });
        out.extend([quad[0], quad[1], quad[2], quad[0], quad[2], quad[3]]);
    }
    out
}

fn lightmaps() -> File {
    let root = Node::parent(octants(|b| match b {
        4 | 6 => Some(Node::with_kind(geo(0))),
        _ => None,
    }));
    let mut c = chunk(root);
    use_materials(&mut c, 1);
    add_quads(&mut c, 8.0, 0);
    if let ClientGeometry::Geometry(g) = &mut c.client.cubes[2].geometry {
        g.lightmap = 1;
    }
    c.client.lightmaps = vec![
        Lightmap { size_exp: 1, luxels: vec![10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120] },
        Lightmap { size_exp: 3, luxels: (0..192).map(|i| (i * 7 % 256) as u8).collect() },
    ];
    file("lightmaps", vec![one_chunk_level(3, c)])
}

fn lit_air(dynamic: Vec<LightRef>, fast: Vec<LightRef>, base: [u8; 3]) -> Node {
    let mut n = Node::empty();
    n.client.lighting = Some(CubeLighting::new(base, dynamic, fast));
    n
}

fn dynamic_fast_lights() -> File {
    let root = Node::parent(octants(|b| match b {
        4 | 5 => Some(Node::with_kind(geo(0))),
        0 => Some(lit_air(
            vec![LightRef { index: 0, amount: 200 }],
            vec![LightRef { index: 1, amount: 30 }],
            [12, 12, 16],
        )),
        1 => Some(lit_air(
            vec![LightRef { index: 0, amount: 90 }, LightRef { index: 1, amount: 255 }],
            vec![],
            [4, 4, 4],
        )),
        _ => None,
    }));
    let mut c = chunk(root);
    use_materials(&mut c, 1);
    add_quads(&mut c, 8.0, 0);
    c.client.lightmaps =
        vec![Lightmap { size_exp: 1, luxels: vec![30; 12] }, Lightmap { size_exp: 2, luxels: vec![50; 48] }];
    c.common.dynamic_lights = vec![
        DynamicLight { flags: light_flags::ENABLE, global_id: 7 },
        DynamicLight { flags: light_flags::ENABLE | light_flags::PRESERVE, global_id: 8 },
    ];
    c.client.dynamic_lights = vec![
        ClientDynamicLight {
            color: [255, 200, 100],
            layers: vec![
                LightmapLayer { lightmap: 0, luxels: (0..12).collect() },
                LightmapLayer { lightmap: 1, luxels: (0..48).map(|i| 255 - i).collect() },
            ],
        },
        ClientDynamicLight { color: [0, 0, 255], layers: vec![LightmapLayer { lightmap: 1, luxels: vec![9; 48] }] },
    ];
    c.common.fast_lights = vec![
        FastLight { flags: light_flags::ENABLE, initial_intensity: 255, global_id: 100 },
        FastLight { flags: 0, initial_intensity: 64, global_id: 101 },
    ];
    c.client.fast_lights = vec![
        ClientFastLight {
            color: [255, 255, 255],
            ranges: vec![
                FastLightRange { skip: 0, multipliers: vec![255, 200, 150, 100] },
                FastLightRange { skip: 8, multipliers: vec![50, 60] },
            ],
        },
        ClientFastLight { color: [255, 0, 0], ranges: vec![FastLightRange { skip: 24, multipliers: vec![1; 24] }] },
    ];
    file("dynamic_fast_lights", vec![one_chunk_level(3, c)])
}

fn visible_air(cubes: Vec<u32>, chunks: Vec<VisibleChunk>) -> Node {
    let mut n = Node::empty();
    n.cube.visibility = Some(Box::new(Visibility { cubes: cubes.into(), chunks: chunks.into() }));
    n
}

fn visibility() -> File {
    // Two chunks side by side along X. Chunk 0: root parent with geometry at octants 4, 6 (cubes 1, 3)
    // and air at 0, 2 (cubes 2? no: pre-order follows bit order) — see indices below.
    let at = |x: u16| ChunkIndex { y: 0, x, z: 0 };
    let root0 = Node::parent(octants(|b| match b {
        0 => Some(visible_air(vec![3, 4], vec![VisibleChunk { chunk: at(1), cubes: vec![] }])),
        1 => Some(visible_air(vec![3], vec![VisibleChunk { chunk: at(1), cubes: vec![2] }])),
        4 | 5 => Some(Node::with_kind(geo(0))),
        _ => None,
    }));
    let root1 = Node::parent(octants(|b| match b {
        0 => Some(visible_air(vec![2], vec![VisibleChunk { chunk: at(0), cubes: vec![3, 4] }])),
        4 => Some(Node::with_kind(geo(0))),
        _ => None,
    }));
    let mut chunks = vec![chunk(root0), chunk(root1)];
    for c in &mut chunks {
        use_materials(c, 1);
        add_quads(c, 8.0, 0);
        c.client.lightmaps = vec![Lightmap { size_exp: 0, luxels: vec![128, 128, 128] }];
    }
    let (common, client) = library();
    let level =
        Level { common, client, chunk_size_exp: 3, grid: GridSize { y: 1, x: 2, z: 1 }, chunks, ..Level::default() };
    file("visibility", vec![level])
}

fn pathfinding() -> File {
    let walk = |dir: [f32; 3]| PathAttribute { name: "walk".to_owned(), direction: dir };
    let mut over = Node::empty();
    over.server = ServerCube { pathfinding: Some(Box::new([walk([0.0; 3])])) };
    let mut guard = Node::empty();
    guard.server = ServerCube {
        pathfinding: Some(Box::new([
            walk([0.0; 3]),
            PathAttribute { name: "guard_post".to_owned(), direction: [0.0, 0.0, -1.0] },
            PathAttribute { name: "cover".to_owned(), direction: [1.0, 0.0, 0.0] },
        ])),
    };
    let mut bare = Node::empty();
    bare.server = ServerCube { pathfinding: Some(Box::new([])) };
    let root = Node::parent(octants(|b| match b {
        4..=6 => Some(Node::with_kind(geo(0))),
        0 => Some(over.clone()),
        1 => Some(guard.clone()),
        2 => Some(bare.clone()),
        _ => None,
    }));
    let mut c = chunk(root);
    use_materials(&mut c, 1);
    add_quads(&mut c, 8.0, 0);
    c.client.lightmaps = vec![Lightmap { size_exp: 0, luxels: vec![128, 128, 128] }];
    file("pathfinding", vec![one_chunk_level(3, c)])
}

fn hexahedron(min: [f32; 3], max: [f32; 3]) -> [[f32; 3]; 8] {
    std::array::from_fn(|bit| {
        let s = child_sign(bit);
        [
            if s[0] > 0.0 { max[0] } else { min[0] },
            if s[1] > 0.0 { max[1] } else { min[1] },
            if s[2] > 0.0 { max[2] } else { min[2] },
        ]
    })
}

fn environment_regions() -> File {
    let mut c = chunk(Node::parent(octants(|b| (b >= 4).then(|| Node::with_kind(geo(0))))));
    use_materials(&mut c, 1);
    add_quads(&mut c, 16.0, 0);
    c.client.lightmaps = vec![Lightmap { size_exp: 0, luxels: vec![128, 128, 128] }];
    let region = |name: &str, min: [f32; 3], max: [f32; 3]| EnvironmentRegion {
        corners: hexahedron(min, max),
        environment: name.to_owned(),
    };
    c.common.weather_regions = vec![region("storm", [-8.0, 0.0, -8.0], [8.0, 8.0, 0.0])];
    c.common.gravity_regions = vec![region("low_gravity", [0.0, 0.0, 0.0], [8.0, 8.0, 8.0])];
    let mut skewed = region("cave_echo", [-8.0, 0.0, 0.0], [0.0, 6.0, 8.0]);
    skewed.corners[0][1] = 7.5; // a non-box hexahedron
    c.client.sound_regions = vec![skewed];
    c.client.sky_regions = vec![region("night_sky", [-8.0, 4.0, -8.0], [8.0, 8.0, 8.0])];
    let mut level = one_chunk_level(4, c);
    level.common.weather_environments = vec![
        WeatherEnvironment { name: "clear".to_owned(), ..WeatherEnvironment::default() },
        WeatherEnvironment {
            name: "storm".to_owned(),
            wind: [3.0, 0.0, -1.0],
            wind_direction_seed: 1234,
            wind_direction_randomness: [0.5, 0.1, 0.5],
            wind_direction_noise_speed: 0.25,
            wind_velocity_seed: 5678,
            wind_velocity_randomness: 2.0,
            wind_velocity_noise_speed: 0.75,
        },
    ];
    level.common.gravity_environments = vec![
        GravityEnvironment { name: "earth".to_owned(), gravity: [0.0, -9.81, 0.0] },
        GravityEnvironment { name: "low_gravity".to_owned(), gravity: [0.0, -1.6, 0.0] },
    ];
    level.common.default_weather = "clear".to_owned();
    level.common.default_gravity = "earth".to_owned();
    level.client.sound_environments = vec![SoundEnvironment {
        name: "cave_echo".to_owned(),
        low_pass: 0.2,
        high_pass: 0.05,
        reverb_delay: 0.12,
        reverb_feedback: 0.6,
        reverb_mix: 0.4,
        reverb_low_pass: 0.3,
        reverb_high_pass: 0.1,
    }];
    let sky = |name: &str| SkyEnvironment {
        name: name.to_owned(),
        flags: 0,
        skybox: ["px", "py", "pz", "nx", "ny", "nz"].map(|f| format!("{name}_{f}")),
        cloud_top: format!("{name}_clouds"),
        cloud_bottom: String::new(),
        skybox_chunk: ChunkIndex::default(),
    };
    let mut day = sky("day_sky");
    day.flags = sky_flags::SKYBOX_3D;
    level.client.sky_environments = vec![day, sky("night_sky")];
    level.client.default_sound = String::new();
    level.client.default_sky = "day_sky".to_owned();
    file("environment_regions", vec![level])
}

fn load_regions() -> File {
    let mut chunks: Vec<Chunk> = (0..2).map(|_| Chunk::default()).collect();
    chunks[0].server.load_regions = vec![
        Region { max: [4.0, 4.0, 4.0], min: [-4.0, -4.0, -4.0], other_chunks: vec![ChunkIndex { y: 0, x: 0, z: 1 }] },
        Region { max: [4.0, 1.0, 4.0], min: [0.0, -4.0, 0.0], other_chunks: vec![] },
    ];
    chunks[1].server.load_regions = vec![Region {
        max: [2.0, 2.0, 2.0],
        min: [-2.0, -2.0, -2.0],
        other_chunks: vec![ChunkIndex { y: 0, x: 0, z: 0 }, ChunkIndex { y: 0, x: 0, z: 1 }],
    }];
    let level = Level { chunk_size_exp: 3, grid: GridSize { y: 1, x: 1, z: 2 }, chunks, ..Level::default() };
    file("load_regions", vec![level])
}

fn grid_3x2x4() -> File {
    let grid = GridSize { y: 2, x: 3, z: 4 };
    let chunks = (0..grid.len())
        .map(|i| {
            let at = grid.index_of(i);
            if (usize::from(at.x) + usize::from(at.z)) % 3 == 0 && at.y == 0 {
                let mut c = chunk(Node::parent(octants(|b| (b == 4 + (i % 4)).then(|| Node::with_kind(geo(0))))));
                use_materials(&mut c, 1);
                add_quads(&mut c, 4.0, 0);
                c.client.lightmaps = vec![Lightmap { size_exp: 0, luxels: vec![i as u8, 64, 64] }];
                c
            } else {
                Chunk::default()
            }
        })
        .collect();
    let (common, client) = library();
    let level = Level {
        common,
        client,
        chunk_size_exp: 2,
        grid,
        center_chunk: ChunkIndex { y: 0, x: 1, z: 2 },
        chunks,
        ..Level::default()
    };
    file("grid_3x2x4", vec![level])
}

fn two_levels() -> File {
    let mut first = nested_parents().levels.remove(0);
    first.flags = level_flags::KEEP_VELOCITY;
    let mut second = one_chunk_level(5, {
        let mut c = chunk(Node::parent(octants(|b| (b == 6).then(|| Node::with_kind(geo(1))))));
        use_materials(&mut c, 2);
        add_quads(&mut c, 32.0, 0);
        c.client.lightmaps = vec![Lightmap { size_exp: 0, luxels: vec![1, 2, 3] }];
        c
    });
    second.flags = level_flags::KEEP_CHUNK_OFFSET | level_flags::KEEP_IN_CHUNK_OFFSET;
    second.common.air_physics_material = "water".to_owned();
    second.common.materials.truncate(2);
    second.client.materials.truncate(2);
    file("two_levels", vec![first, second])
}

fn entities() -> File {
    use pmfedit_core::format::pmf::entity::{
        AudioEmitter, Compare, Counter, CustomProperty, Entity, EntityData, Light as LightEntity, LightFlags,
        LightKind, Prop, PropFlags, PropertyData, PropertyValues, Text, TextFlags, Trigger, TriggerFlags,
    };
    let prop = |name: &str, v: PropertyValues, dims: Vec<u32>| CustomProperty {
        name: name.to_owned(),
        value: if dims.is_empty() { PropertyData::scalar(v) } else { PropertyData::array(dims, v) },
    };
    let mut crate_prop = Entity::new(
        "crate_1",
        EntityData::Prop(Prop {
            flags: PropFlags(PropFlags::PHYSICS.0 | PropFlags::NO_ANIMATION_LOOP.0),
            position: [1.5, 0.5, -2.0],
            rotation: [0.0, 45.0, 0.0],
            box_pos: [0.5; 3],
            box_neg: [-0.5; 3],
            mass: 20.0,
            drag: 0.1,
            model: "map:models/crate".to_owned(),
            shadow_size: [1.0, 1.0],
            sig_hide: "crate_hide".to_owned(),
            ..Prop::default()
        }),
    );
    crate_prop.custom = vec![
        prop("quantity", PropertyValues::I32(vec![3]), vec![]),
        prop("tint", PropertyValues::F32(vec![1.0, 0.5, 0.25]), vec![3]),
        prop(
            "loot_flags",
            PropertyValues::Bool(vec![true, false, true, true, false, false, false, false, true, true]),
            vec![10],
        ),
        prop("grid", PropertyValues::U8(vec![1, 2, 3, 4, 5, 6]), vec![2, 3]),
        prop("label", PropertyValues::Str(vec!["supplies".to_owned()]), vec![]),
    ];
    let mut lamp = Entity::new(
        "lamp",
        EntityData::Light(LightEntity {
            flags: LightFlags::default(),
            position: [0.0, 3.5, 0.0],
            color: [255, 220, 180],
            intensity: 2.0,
            size: [0.2; 3],
            range: 12.0,
            kind: LightKind::Spot { cone_radius: 30.0 },
            sig_toggle: "lights_toggle".to_owned(),
            ..LightEntity::default()
        }),
    );
    lamp.gamemodes = 0b10;
    let door_trigger = Entity::new(
        "door_trigger",
        EntityData::Trigger(Trigger {
            flags: TriggerFlags(TriggerFlags::MUTUAL.0),
            position: [2.0, 1.0, 2.0],
            bounds: hexahedron([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]),
            team_filter: "blue".to_owned(),
            out_entered: "open_door".to_owned(),
            out_exited: "close_door".to_owned(),
            ..Trigger::default()
        }),
    );
    let sign = Entity::new(
        "sign",
        EntityData::Text(Text {
            flags: TextFlags(TextFlags::HORIZONTAL_CENTER.0 | TextFlags::VERTICAL_CENTER.0),
            position: [0.0, 2.0, -3.9],
            view_distance: 20.0,
            offsets: [-1.0, 1.0, 0.5, -0.5],
            font: "common:fonts/sans".to_owned(),
            size: 0.25,
            color: [255, 255, 255, 255],
            text: "Welcome".to_owned(),
            ..Text::default()
        }),
    );
    let ambience = Entity::new(
        "ambience",
        EntityData::AudioEmitter(AudioEmitter {
            position: [0.0, 1.0, 0.0],
            speed: 1.0,
            volume: [0.8, 0.8],
            range: 30.0,
            radius: [4.0; 3],
            sound: "map:sounds/wind".to_owned(),
            ..AudioEmitter::default()
        }),
    );
    let counter = Entity::new(
        "kills",
        EntityData::Counter(Counter {
            compare: Compare::Ge,
            initial: 0,
            target: 10,
            sig_increment: "kill".to_owned(),
            output: "all_dead".to_owned(),
            ..Counter::default()
        }),
    );
    // A beam (type 9) kept opaque: its payload holds only numbers, no string offsets.
    let beam = Entity::new(
        "beam",
        EntityData::Opaque {
            type_id: 9,
            custom_count: 0,
            payload: [1.0f32, 2.0, 3.0].iter().flat_map(|f| f.to_le_bytes()).collect(),
        },
    );

    let mut c = chunk(Node::parent(octants(|b| (b >= 4).then(|| Node::with_kind(geo(0))))));
    use_materials(&mut c, 1);
    add_quads(&mut c, 16.0, 0);
    c.client.lightmaps = vec![Lightmap { size_exp: 0, luxels: vec![128, 128, 128] }];
    c.server.entities = vec![crate_prop, door_trigger, beam];
    let mut level = one_chunk_level(4, c);
    level.server.entities = vec![lamp, sign, ambience];
    let mut f = file("entities", vec![level]);
    f.entities = vec![counter, Entity::new("world", EntityData::Dummy)];
    f
}

fn archive() -> File {
    use pmfedit_core::format::paf::Archive;
    use pmfedit_core::format::ptf::Ptf;
    // A 16×8 brick pattern, generated so the case needs no binary inputs.
    let img = image::RgbaImage::from_fn(16, 8, |x, y| {
        let mortar = y % 4 == 0 || (x + if (y / 4) % 2 == 0 { 0 } else { 4 }) % 8 == 0;
        if mortar { image::Rgba([200, 200, 190, 255]) } else { image::Rgba([150, 50 + (x * 3) as u8, 40, 255]) }
    });
    let (ptf, warnings) = Ptf::from_image(&image::DynamicImage::ImageRgba8(img), "textures/walls/brick.png").unwrap();
    assert!(warnings.is_empty());
    let mut a = Archive::new();
    a.insert_file("textures/walls/brick.ptf", ptf.write().unwrap()).unwrap();
    a.insert_file("scripts/init.txt", b"print(\"hello from the map archive\")\n".to_vec()).unwrap();
    a.insert_file("README", b"pmfedit golden archive\n".to_vec()).unwrap();
    a.insert_link("textures/default", "textures/walls/brick.ptf").unwrap();

    let mut c = chunk(Node::parent(octants(|b| (b >= 4).then(|| Node::with_kind(geo(0))))));
    use_materials(&mut c, 1);
    add_quads(&mut c, 8.0, 0);
    c.client.lightmaps = vec![Lightmap { size_exp: 0, luxels: vec![128, 128, 128] }];
    let mut level = one_chunk_level(3, c);
    level.client.materials[0].texture = "map:textures/walls/brick".to_owned();
    let mut f = file("archive", vec![level]);
    f.archive = a.to_bytes().unwrap();
    f
}
