//! Building chunk octrees for tests: a nested [`Node`] flattened into the PMF cube arrays in the
//! writer's order (depth-first, pre-order, children in bit order; docs/spec/PMF-NOTES.md C1/C2).

use pmfedit_core::format::pmf::{
    ChildIndex, ChunkClient, ChunkCommon, ChunkServer, ClientCube, ClientGeometry, ClientGeometryCube, Cube, CubeKind,
    ParentCube, ServerCube, Vertex,
};

/// One cube with its client and server parts, and children if it is a parent.
#[derive(Debug, Clone, Default)]
pub struct Node {
    pub cube: Cube,
    pub client: ClientCube,
    pub server: ServerCube,
    /// Children in bit order; only used when `cube.kind` is `Parent` (its indices are filled in).
    pub children: [Option<Box<Node>>; 8],
}

impl Node {
    pub fn empty() -> Self {
        Self::default()
    }

    pub fn parent(children: [Option<Node>; 8]) -> Self {
        Self {
            cube: Cube { kind: CubeKind::Parent(ParentCube::default()), ..Cube::default() },
            children: children.map(|c| c.map(Box::new)),
            ..Self::default()
        }
    }

    pub fn with_kind(kind: CubeKind) -> Self {
        Self { cube: Cube { kind, ..Cube::default() }, ..Self::default() }
    }
}

/// Sign of child `bit` along x, y, z (+1 or −1), per docs/spec/PMF-NOTES.md C2.
pub fn child_sign(bit: usize) -> [f32; 3] {
    [
        if bit & 1 != 0 { -1.0 } else { 1.0 },
        if bit & 4 != 0 { -1.0 } else { 1.0 },
        if bit & 2 != 0 { -1.0 } else { 1.0 },
    ]
}

/// Flattens `root` into the cube arrays of a chunk, pre-order.
pub fn flatten(root: Node) -> (Vec<Cube>, Vec<ClientCube>, Vec<ServerCube>) {
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    push(root, &mut out);
    out
}

fn push(node: Node, out: &mut (Vec<Cube>, Vec<ClientCube>, Vec<ServerCube>)) -> u32 {
    let at = out.0.len();
    out.0.push(node.cube);
    out.1.push(node.client);
    out.2.push(node.server);
    let mut indices = [None; 8];
    for (bit, child) in node.children.into_iter().enumerate() {
        if let Some(child) = child {
            // Children are pushed after their parent, so none is the root (0).
            indices[bit] = ChildIndex::new(push(*child, out));
        }
    }
    if let CubeKind::Parent(p) = &mut out.0[at].kind {
        p.children = indices;
    }
    at as u32
}

/// Puts a flattened tree into chunk blocks (other fields default).
pub fn chunk_blocks(root: Node) -> (ChunkCommon, ChunkClient, ChunkServer) {
    let (cubes, client_cubes, server_cubes) = flatten(root);
    (
        ChunkCommon { cubes, ..ChunkCommon::default() },
        ChunkClient { cubes: client_cubes, ..ChunkClient::default() },
        ChunkServer { cubes: server_cubes, ..ChunkServer::default() },
    )
}

/// The four corners of face `face` (order +X, +Y, +Z, −X, −Y, −Z) of an axis-aligned cube,
/// counter-clockwise seen from outside, first corner at the smallest texture (u, v) (docs/spec/PMF-NOTES.md G2).
/// Texture UV is the world position in cube units on the face's plane; lightmap UV spans [0, 1].
pub fn face_quad(center: [f32; 3], edge: f32, face: usize) -> [Vertex; 4] {
    let h = edge / 2.0;
    let axis = face % 3;
    let sign = if face < 3 { 1.0 } else { -1.0 };
    // Tangent axes (u, v) chosen so that u × v points along the outward normal.
    let (u_axis, v_axis) = match axis {
        0 => (2, 1),
        1 => (0, 2),
        _ => (1, 0),
    };
    let (u_axis, v_axis) = if sign > 0.0 { (v_axis, u_axis) } else { (u_axis, v_axis) };
    let corner = |du: f32, dv: f32| {
        let mut p = center;
        p[axis] += sign * h;
        p[u_axis] += du * h;
        p[v_axis] += dv * h;
        Vertex {
            position: p,
            uv: [p[u_axis] / edge, p[v_axis] / edge],
            lightmap_uv: [(du + 1.0) / 2.0, (dv + 1.0) / 2.0],
        }
    };
    [corner(-1.0, -1.0), corner(1.0, -1.0), corner(1.0, 1.0), corner(-1.0, 1.0)]
}

/// Client geometry for a plain geometry cube whose faces `faces` (bits) start at `first_vertex`,
/// and the vertices for them.
pub fn geometry_faces(
    center: [f32; 3],
    edge: f32,
    faces: u8,
    first_vertex: u32,
    lightmap: u8,
) -> (ClientGeometry, Vec<Vertex>) {
    let mut vertices = Vec::new();
    for face in 0..6 {
        if faces & (1 << face) != 0 {
            vertices.extend(face_quad(center, edge, face));
        }
    }
    (ClientGeometry::Geometry(ClientGeometryCube { lightmap, first_vertex, faces }), vertices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quads_wind_counter_clockwise_outward() {
        for face in 0..6 {
            let q = face_quad([0.0; 3], 2.0, face);
            let sub = |a: [f32; 3], b: [f32; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
            let (e1, e2) = (sub(q[1].position, q[0].position), sub(q[2].position, q[0].position));
            let n = [e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]];
            let mut expected = [0.0; 3];
            expected[face % 3] = if face < 3 { 1.0 } else { -1.0 };
            let dot: f32 = (0..3).map(|i| n[i] * expected[i]).sum();
            assert!(dot > 0.0, "face {face} normal {n:?}");
            // First corner has the smallest (u, v).
            assert!(q.iter().all(|v| v.uv[0] >= q[0].uv[0] && v.uv[1] >= q[0].uv[1]), "face {face}");
        }
    }

    #[test]
    fn flatten_is_preorder_in_bit_order() {
        let mut kids: [Option<Node>; 8] = Default::default();
        kids[0] = Some(Node::parent([Some(Node::empty()), None, None, None, None, None, None, None]));
        kids[7] = Some(Node::empty());
        let (cubes, client, server) = flatten(Node::parent(kids));
        assert_eq!(cubes.len(), 4);
        assert_eq!((client.len(), server.len()), (4, 4));
        let CubeKind::Parent(root) = &cubes[0].kind else { panic!("root is not a parent") };
        assert_eq!(root.indices(), [Some(1), None, None, None, None, None, None, Some(3)]);
        let CubeKind::Parent(inner) = &cubes[1].kind else { panic!("cube 1 is not a parent") };
        assert_eq!(inner.indices()[0], Some(2));
    }
}
