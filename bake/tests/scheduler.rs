//! The background scheduler: results arrive through the channel with a wake-up call; a panicking
//! bake is reported with its chunk and the pool keeps working; stale results are dropped; nearest
//! chunks go first; submitting never blocks on running bakes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use glam::DVec3;

use pmfedit_bake::compile::{CompileSettings, bake_chunk};
use pmfedit_bake::scheduler::{BakeEvent, BakeFn, Scheduler};
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::sample;

fn keys(map: &Map, n: usize) -> Vec<(usize, ChunkCoord)> {
    map.levels[0].chunks().take(n).map(|(c, _)| (0, *c)).collect()
}

#[test]
fn bakes_arrive_with_a_wake_up_call() {
    let map = Arc::new(sample::demo());
    let wakes = Arc::new(AtomicUsize::new(0));
    let w = wakes.clone();
    let s = Scheduler::new(
        2,
        CompileSettings::default(),
        Arc::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        }),
    );
    assert_eq!(s.threads(), 2);
    let k = keys(&map, 4);
    s.submit(map.clone(), k.clone());
    s.wait_idle();
    let events = s.drain();
    assert_eq!(events.len(), 4);
    assert_eq!(wakes.load(Ordering::SeqCst), 4);
    let mut baked: Vec<_> = events
        .into_iter()
        .map(|e| match e {
            BakeEvent::Baked { bake, .. } => {
                // Same bytes as a bake on this thread.
                assert_eq!(*bake, bake_chunk(&map, 0, bake.chunk, &CompileSettings::default()).unwrap());
                (bake.level, bake.chunk)
            }
            other => panic!("{other:?}"),
        })
        .collect();
    baked.sort();
    assert_eq!(baked, k);
}

#[test]
fn a_panicking_bake_is_reported_and_the_pool_goes_on() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 3);
    let bad = k[1].1;
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, l, c, s: &CompileSettings| {
        if c == bad {
            panic!("injected failure");
        }
        bake_chunk(m, l, c, s).map_err(|e| e.to_string())
    });
    let s = Scheduler::with_bake_fn(1, CompileSettings::default(), Arc::new(|| {}), bake);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // keep the expected panic out of the test output
    s.submit(map.clone(), k.clone());
    s.wait_idle();
    std::panic::set_hook(hook);
    let events = s.drain();
    assert_eq!(events.len(), 3);
    let panicked: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            BakeEvent::Panicked { key, message } => Some((*key, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(panicked, vec![(k[1], "injected failure".to_owned())]);
    // The worker survived: more work still gets done.
    s.submit(map.clone(), [k[0]]);
    s.wait_idle();
    assert!(matches!(s.drain().as_slice(), [BakeEvent::Baked { .. }]));
}

#[test]
fn stale_results_are_dropped_and_newer_requests_win() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 1);
    // A slow bake function so the second request arrives while the first runs.
    let started = Arc::new(Mutex::new(0usize));
    let st = started.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, l, c, s: &CompileSettings| {
        *st.lock().unwrap() += 1;
        std::thread::sleep(Duration::from_millis(150));
        bake_chunk(m, l, c, s).map_err(|e| e.to_string())
    });
    let s = Scheduler::with_bake_fn(1, CompileSettings::default(), Arc::new(|| {}), bake);
    let mut edited = (*map).clone();
    edited.meta.name = "edited".into();
    let edited = Arc::new(edited);
    s.submit(map.clone(), k.clone());
    // Wait until the first bake runs, then supersede it.
    let t = Instant::now();
    while *started.lock().unwrap() == 0 {
        assert!(t.elapsed() < Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(5));
    }
    let before = Instant::now();
    s.submit(edited.clone(), k.clone());
    assert!(before.elapsed() < Duration::from_millis(100), "submit blocked on a running bake");
    s.wait_idle();
    let events = s.drain();
    // Only the newer request's result arrives.
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(*started.lock().unwrap(), 2);
}

#[test]
fn nearest_chunks_go_first() {
    let map = Arc::new(sample::demo());
    let all = keys(&map, 25);
    let order = Arc::new(Mutex::new(Vec::new()));
    let o = order.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, l, c, s: &CompileSettings| {
        o.lock().unwrap().push(c);
        bake_chunk(m, l, c, s).map_err(|e| e.to_string())
    });
    let s = Scheduler::with_bake_fn(1, CompileSettings::default(), Arc::new(|| {}), bake);
    // Camera far out along +X: chunks with larger x first.
    s.set_camera(0, DVec3::new(1000.0, 0.0, 0.0));
    s.submit(map.clone(), all.clone());
    s.wait_idle();
    let order = order.lock().unwrap();
    assert_eq!(order.len(), all.len());
    let xs: Vec<i32> = order.iter().map(|c| c.x).collect();
    assert!(xs.windows(2).all(|w| w[0] >= w[1]), "not nearest first: {xs:?}");
}
