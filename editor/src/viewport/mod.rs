//! The 3D viewport: baked chunk meshes drawn with three-d, camera, picking and gizmos.
