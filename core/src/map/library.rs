//! Materials, physics and sound materials, environments, regions, lights and entities. STUB.
