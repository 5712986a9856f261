//! The background scheduler: results arrive through the channel with a wake-up call; a panicking
//! bake is reported with its chunk and the pool keeps working; stale results are dropped; nearest
//! chunks go first; submitting never blocks on running bakes. Two stages: every preview runs
//! before any full bake, events say their stage, a newer submit replaces both pending stages.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use glam::DVec3;

use pmfedit_bake::compile::{CompileError, CompileSettings, bake_chunk};
use pmfedit_bake::deps::ChunkKey;
use pmfedit_bake::scheduler::{BakeEvent, BakeFn, Scheduler, Stage};
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
    // A full bake of each chunk and a preview of each chunk whose full bake did not come first: a
    // preview finishing after its own full bake is dropped (the module's contract). That happens
    // when the other worker, done with the previews it took, runs the full bakes (served from the
    // previews' light memos, so quick) while a preview is still running. The first preview to
    // finish is always delivered: no full bake starts before every preview has been taken.
    // Every delivered bake comes with exactly one wake-up call.
    assert!((5..=8).contains(&events.len()), "{} events", events.len());
    assert_eq!(wakes.load(Ordering::SeqCst), events.len());
    let full = CompileSettings::default();
    let mut baked: Vec<_> = events
        .into_iter()
        .map(|e| match e {
            BakeEvent::Baked { bake, stage, .. } => {
                // Same bytes as a bake of that stage on this thread.
                let settings = if stage == Stage::Preview { full.preview() } else { full.clone() };
                assert_eq!(*bake, bake_chunk(&map, 0, bake.chunk, &settings).unwrap());
                (stage, bake.level, bake.chunk)
            }
            other => panic!("{other:?}"),
        })
        .collect();
    baked.sort();
    let (previews, fulls): (Vec<_>, Vec<_>) = baked.into_iter().partition(|b| b.0 == Stage::Preview);
    let every = |st: Stage| -> Vec<_> { k.iter().map(|&(l, c)| (st, l, c)).collect() };
    assert_eq!(fulls, every(Stage::Full));
    assert!(!previews.is_empty() && previews.iter().all(|p| every(Stage::Preview).contains(p)), "{previews:?}");
}

#[test]
fn submit_full_bakes_no_previews() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 3);
    let s = Scheduler::new(2, CompileSettings::default(), Arc::new(|| {}));
    s.submit_full(map.clone(), k.clone());
    s.wait_idle();
    let events = s.drain();
    assert_eq!(events.len(), 3);
    assert!(events.iter().all(|e| matches!(e, BakeEvent::Baked { stage: Stage::Full, .. })), "{events:?}");
}

#[test]
fn a_panicking_bake_is_reported_and_the_pool_goes_on() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 3);
    let bad = k[1].1;
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, _: Stage, s: &CompileSettings| {
        if c == bad {
            panic!("injected failure");
        }
        bake_chunk(m, l, c, s)
    });
    let s = Scheduler::with_bake_fn(1, CompileSettings::default(), Arc::new(|| {}), bake);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // keep the expected panic out of the test output
    s.submit(map.clone(), k.clone());
    s.wait_idle();
    std::panic::set_hook(hook);
    let events = s.drain();
    // Two chunks bake in both stages; the bad one's preview panics and its full bake (which
    // would panic the same way) is cancelled.
    assert_eq!(events.len(), 5, "{events:?}");
    let panicked: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            BakeEvent::Panicked { key, stage, message } => Some((*key, *stage, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(panicked, vec![(k[1], Stage::Preview, "injected failure".to_owned())]);
    assert!(events.iter().all(|e| match e {
        BakeEvent::Baked { bake, .. } => (bake.level, bake.chunk) != k[1],
        _ => true,
    }));
    // The worker survived: more work still gets done.
    s.submit(map.clone(), [k[0]]);
    s.wait_idle();
    let stages: Vec<Stage> = s.drain().iter().map(BakeEvent::stage).collect();
    assert_eq!(stages, [Stage::Preview, Stage::Full]);
}

#[test]
fn stale_results_are_dropped_and_newer_requests_win() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 1);
    // A slow bake function so the second request arrives while the first runs.
    let started = Arc::new(Mutex::new(0usize));
    let st = started.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, _: Stage, s: &CompileSettings| {
        *st.lock().unwrap() += 1;
        // Long enough that a loaded machine still submits the newer request while it runs.
        std::thread::sleep(Duration::from_millis(800));
        bake_chunk(m, l, c, s)
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
    assert!(before.elapsed() < Duration::from_millis(400), "submit blocked on a running bake");
    s.wait_idle();
    let events = s.drain();
    // Only the newer request's results arrive: the old preview ran and was dropped, the old
    // full bake was replaced before it started.
    let stages: Vec<Stage> = events.iter().map(BakeEvent::stage).collect();
    assert_eq!(stages, [Stage::Preview, Stage::Full], "{events:?}");
    assert_eq!(*started.lock().unwrap(), 3);
}

/// The x of each demo chunk a one-worker scheduler bakes, in order, per stage (previews, then
/// full bakes), once `aim` has set its camera or focus.
fn bake_order_x(aim: impl FnOnce(&Scheduler)) -> Vec<Vec<i32>> {
    let map = Arc::new(sample::demo());
    let all = keys(&map, 25);
    let order = Arc::new(Mutex::new(Vec::new()));
    let o = order.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, _: Stage, s: &CompileSettings| {
        o.lock().unwrap().push(c);
        bake_chunk(m, l, c, s)
    });
    let s = Scheduler::with_bake_fn(1, CompileSettings::default(), Arc::new(|| {}), bake);
    aim(&s);
    s.submit(map.clone(), all.clone());
    s.wait_idle();
    let order = order.lock().unwrap();
    assert_eq!(order.len(), 2 * all.len());
    order.chunks(all.len()).map(|stage| stage.iter().map(|c| c.x).collect()).collect()
}

#[test]
fn nearest_chunks_go_first() {
    // Camera far out along +X: chunks with larger x first, within each stage.
    for xs in bake_order_x(|s| s.set_camera(0, DVec3::new(1000.0, 0.0, 0.0))) {
        assert!(xs.windows(2).all(|w| w[0] >= w[1]), "not nearest first: {xs:?}");
        assert!(xs.first() > xs.last(), "the chunks differ in x: {xs:?}");
    }
}

/// A focus (the editor's view centre) orders the bakes whatever the camera: the light memos kept
/// are the focus's nearest, so bakes nearest it record the memos that stay.
#[test]
fn a_focus_orders_the_bakes_whatever_the_camera() {
    // Focus far out along −X, the camera far out along +X, before and after: smaller x first.
    let order = bake_order_x(|s| {
        s.set_camera(0, DVec3::new(1000.0, 0.0, 0.0));
        s.set_focus(0, DVec3::new(-1000.0, 0.0, 0.0));
        s.set_camera(0, DVec3::new(1000.0, 0.0, 0.0));
    });
    for xs in order {
        assert!(xs.windows(2).all(|w| w[0] <= w[1]), "not nearest the focus first: {xs:?}");
        assert!(xs.first() < xs.last(), "the chunks differ in x: {xs:?}");
    }
}

/// Blocks the calling bake until the test opens it.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: std::sync::Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            let (g, timeout) = self.cv.wait_timeout(open, Duration::from_secs(30)).unwrap();
            assert!(!timeout.timed_out(), "gate never opened");
            open = g;
        }
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }
}

/// Waits (bounded) until `cond` holds.
fn until(mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < Duration::from_secs(30), "timed out");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A copy of `map` with one more cube in each of `chunks` (so their bakes' generations change).
fn edited(map: &Map, chunks: &[(usize, ChunkCoord)]) -> Arc<Map> {
    use pmfedit_core::map::coords::CubeAddr;
    use pmfedit_core::map::octree::Cube;
    let mut m = map.clone();
    for &(l, c) in chunks {
        let level = &mut m.levels[l];
        let min = level.frame().chunk_min_lattice(c);
        let stone = Cube::solid(Default::default(), Default::default(), Default::default());
        level.set_cube(CubeAddr::containing(min, 3), stone).unwrap();
    }
    Arc::new(m)
}

/// The (stage, chunk) of each bake, in the order they ran.
type Runs = Arc<Mutex<Vec<(Stage, ChunkCoord)>>>;

/// A one-worker scheduler that records its bakes ([`Runs`]), camera far on +X.
fn recording_scheduler() -> (Scheduler, Runs) {
    let runs = Arc::new(Mutex::new(Vec::new()));
    let r = runs.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
        r.lock().unwrap().push((stage, c));
        bake_chunk(m, l, c, s)
    });
    let s = Scheduler::with_bake_fn(1, CompileSettings::default(), Arc::new(|| {}), bake);
    s.set_camera(0, DVec3::new(1000.0, 0.0, 0.0));
    (s, runs)
}

fn generation(map: &Map, key: (usize, ChunkCoord)) -> u64 {
    map.levels[key.0].chunk(key.1).map_or(0, |c| c.generation())
}

#[test]
fn every_preview_runs_before_any_full_bake_and_events_carry_the_stage() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 6);
    let (s, runs) = recording_scheduler();
    // Two submits: the second one's previews still go before the first one's full bakes. Holding
    // the record's lock stalls the worker in its first bake, so at most one chunk is taken
    // before the second submit arrives.
    let hold = runs.lock().unwrap();
    s.submit(map.clone(), k[..3].to_vec());
    s.submit(map.clone(), k[3..].to_vec());
    drop(hold);
    s.wait_idle();
    let runs = runs.lock().unwrap().clone();
    let stages: Vec<Stage> = runs.iter().map(|r| r.0).collect();
    assert_eq!(stages, [[Stage::Preview; 6], [Stage::Full; 6]].concat(), "{runs:?}");
    // The same order of chunks in both stages: nearest first. The one worker may already have
    // taken the first submit's nearest chunk before the second submit arrived; every other
    // preview follows the full bakes' order (all six queued by then).
    let chunks: Vec<ChunkCoord> = runs.iter().map(|r| r.1).collect();
    let (previews, fulls) = chunks.split_at(6);
    let first = previews[0];
    assert!(first == fulls[0] || k[..3].iter().any(|&(_, c)| c == first), "{runs:?}");
    let rest: Vec<ChunkCoord> = fulls.iter().copied().filter(|&c| c != first).collect();
    assert_eq!(previews[1..], rest[..], "{runs:?}");
    // The events arrive in the same order and say their stage; previews carry no visibility or
    // pathfinding data.
    let events = s.drain();
    let got: Vec<(Stage, ChunkCoord)> = events
        .iter()
        .map(|e| match e {
            BakeEvent::Baked { bake, stage, .. } => {
                let air_data = bake.pmf.common.cubes.iter().any(|c| c.visibility.is_some())
                    || bake.pmf.server.cubes.iter().any(|c| c.pathfinding.is_some());
                if *stage == Stage::Preview {
                    assert!(!air_data, "a preview with visibility or pathfinding data");
                }
                (*stage, bake.chunk)
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(got, runs);
    assert!(
        events.iter().any(|e| matches!(e, BakeEvent::Baked { stage: Stage::Full, bake, .. }
            if bake.pmf.common.cubes.iter().any(|c| c.visibility.is_some()))),
        "no full bake had visibility data"
    );
}

#[test]
fn a_newer_submit_replaces_both_pending_stages() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 3);
    let gate = Arc::new(Gate::default());
    let runs = Arc::new(Mutex::new(Vec::new()));
    let (g, r) = (gate.clone(), runs.clone());
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
        r.lock().unwrap().push((stage, c, generation(m, (l, c))));
        g.wait();
        bake_chunk(m, l, c, s)
    });
    let s = Scheduler::with_bake_fn(1, CompileSettings::default(), Arc::new(|| {}), bake);
    s.submit(map.clone(), k.clone());
    until(|| !runs.lock().unwrap().is_empty());
    // The first preview runs; chunks 0 and 1 get a newer request, chunk 2 does not.
    let first = runs.lock().unwrap()[0].1;
    let newer = edited(&map, &k[..2]);
    s.submit(newer.clone(), k[..2].to_vec());
    gate.open();
    s.wait_idle();
    let runs = runs.lock().unwrap().clone();
    // Old full bakes of chunks 0 and 1 never ran.
    for key in &k[..2] {
        let old = generation(&map, *key);
        assert!(!runs.contains(&(Stage::Full, key.1, old)), "{runs:?}");
    }
    let events = s.drain();
    let mut got: Vec<(Stage, ChunkCoord, u64)> = events
        .iter()
        .map(|e| match e {
            BakeEvent::Baked { bake, stage, .. } => (*stage, bake.chunk, bake.generation),
            other => panic!("{other:?}"),
        })
        .collect();
    got.sort();
    // One preview and one full bake per chunk; chunks 0 and 1 from the newer snapshot.
    let mut expected = Vec::new();
    for stage in [Stage::Preview, Stage::Full] {
        for (i, key) in k.iter().enumerate() {
            let m = if i < 2 { &newer } else { &map };
            expected.push((stage, key.1, generation(m, *key)));
        }
    }
    expected.sort();
    assert_eq!(got, expected, "first run: {first:?}");
    assert_ne!(generation(&map, k[0]), generation(&newer, k[0]));
}

#[test]
fn a_stale_full_result_is_dropped() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 1);
    let gate = Arc::new(Gate::default());
    let full_started = Arc::new(AtomicUsize::new(0));
    let (g, f) = (gate.clone(), full_started.clone());
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
        if stage == Stage::Full {
            f.fetch_add(1, Ordering::SeqCst);
            g.wait();
        }
        bake_chunk(m, l, c, s)
    });
    let s = Scheduler::with_bake_fn(1, CompileSettings::default(), Arc::new(|| {}), bake);
    s.submit(map.clone(), k.clone());
    until(|| full_started.load(Ordering::SeqCst) == 1);
    // The old preview is done; its full bake runs when the newer request comes.
    let newer = edited(&map, &k);
    s.submit(newer.clone(), k.clone());
    gate.open();
    s.wait_idle();
    let got: Vec<(Stage, u64)> = s
        .drain()
        .into_iter()
        .map(|e| match e {
            BakeEvent::Baked { bake, stage, .. } => (stage, bake.generation),
            other => panic!("{other:?}"),
        })
        .collect();
    // The old full bake's result is dropped; so is the old preview, sent but not yet received
    // when the newer request came.
    let new = generation(&newer, k[0]);
    assert_ne!(new, generation(&map, k[0]));
    assert_eq!(got, [(Stage::Preview, new), (Stage::Full, new)]);
    assert_eq!(full_started.load(Ordering::SeqCst), 2);
}

#[test]
fn a_preview_finishing_after_its_full_bake_is_dropped() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 1);
    // Two workers: one holds the preview, the other runs the full bake meanwhile.
    let gate = Arc::new(Gate::default());
    let g = gate.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
        if stage == Stage::Preview {
            g.wait();
        }
        bake_chunk(m, l, c, s)
    });
    let s = Scheduler::with_bake_fn(2, CompileSettings::default(), Arc::new(|| {}), bake);
    s.submit(map.clone(), k.clone());
    let t = Instant::now();
    let full = loop {
        if let Some(e) = s.try_recv() {
            break e;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no full bake");
        std::thread::sleep(Duration::from_millis(2));
    };
    assert_eq!(full.stage(), Stage::Full);
    gate.open();
    s.wait_idle();
    // The late preview would replace the full bake with a poorer one: dropped.
    assert!(s.drain().is_empty());
}

#[test]
fn a_failed_preview_cancels_its_full_bake() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 2);
    let bad = k[0].1;
    let runs = Arc::new(Mutex::new(Vec::new()));
    let r = runs.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
        r.lock().unwrap().push((stage, c));
        if c == bad {
            return Err(CompileError::Format("injected error".into()));
        }
        bake_chunk(m, l, c, s)
    });
    let s = Scheduler::with_bake_fn(1, CompileSettings::default(), Arc::new(|| {}), bake);
    s.submit(map.clone(), k.clone());
    s.wait_idle();
    let events = s.drain();
    let failed: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            BakeEvent::Failed { key, stage, error } => Some((*key, *stage, error.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(failed, [(k[0], Stage::Preview, "injected error".to_owned())]);
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(!runs.lock().unwrap().contains(&(Stage::Full, bad)));
}

#[test]
fn urgent_chunks_go_first_within_each_stage() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 6);
    let (s, runs) = recording_scheduler();
    // The farthest chunk from the camera is the urgent one.
    let far = *k.iter().min_by_key(|key| (key.1.x, key.1)).unwrap();
    let rest: Vec<_> = k.iter().copied().filter(|key| *key != far).collect();
    // Holding the record's lock stalls the worker in its first job (see above).
    let hold = runs.lock().unwrap();
    s.submit(map.clone(), rest);
    s.submit_urgent(map.clone(), [far]);
    drop(hold);
    s.wait_idle();
    let runs = runs.lock().unwrap().clone();
    // A preview and a full bake of each of the others; a draft and a full bake of the urgent one
    // (no preview: it would take as long as its full bake).
    assert_eq!(runs.len(), 12, "{runs:?}");
    assert_eq!(runs.iter().filter(|r| r.0 == Stage::Draft).collect::<Vec<_>>(), [&(Stage::Draft, far.1)]);
    assert!(!runs.contains(&(Stage::Preview, far.1)), "{runs:?}");
    // The worker may have taken one job before the urgent submit; the urgent chunk's draft comes
    // next, then the five previews, then the urgent chunk's full bake before the other ones.
    let draft = runs.iter().position(|r| *r == (Stage::Draft, far.1)).unwrap();
    assert!(draft <= 1, "{runs:?}");
    assert!(runs[..6].iter().all(|r| r.0 != Stage::Full), "{runs:?}");
    assert_eq!(runs[6], (Stage::Full, far.1), "{runs:?}");
}

/// No full bake starts while a draft runs (an edit's draft gets the cores to itself); one starts
/// as soon as the draft is done.
#[test]
fn full_bakes_wait_for_a_running_draft() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 3);
    let gate = Arc::new(Gate::default());
    let (g, fulls) = (gate.clone(), Arc::new(AtomicUsize::new(0)));
    let f = fulls.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
        match stage {
            Stage::Draft => g.wait(),
            Stage::Full => {
                f.fetch_add(1, Ordering::SeqCst);
            }
            Stage::Preview => {}
        }
        bake_chunk(m, l, c, s)
    });
    // Three general workers: two stay idle while the draft is held, though full jobs wait.
    let s = Scheduler::with_options(3, CompileSettings::default(), Arc::new(|| {}), bake, false);
    s.submit_full(map.clone(), k[1..].to_vec());
    until(|| fulls.load(Ordering::SeqCst) == 2);
    s.submit_urgent(map.clone(), [k[0]]);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(fulls.load(Ordering::SeqCst), 2, "a full bake started while the draft ran");
    gate.open();
    s.wait_idle();
    assert_eq!(fulls.load(Ordering::SeqCst), 3);
    let stages: Vec<Stage> = s.drain().iter().filter(|e| e.key() == k[0]).map(BakeEvent::stage).collect();
    assert_eq!(stages, [Stage::Draft, Stage::Full]);
}

/// A draft is the preview's mesh and lightmap layout with cheaper luxels; settings whose
/// lighting is already that cheap get no draft at all.
#[test]
fn drafts_share_the_preview_layout_and_are_skipped_when_they_would_equal_it() {
    let map = Arc::new(sample::demo());
    let settings = CompileSettings::default();
    let (draft, preview) = (settings.draft(), settings.preview());
    assert!(settings.draft_differs());
    // The demo's biggest chunk by faces (sized lights shine on it).
    let chunk = keys(&map, usize::MAX)
        .into_iter()
        .max_by_key(|&(l, c)| bake_chunk(&map, l, c, &preview).unwrap().pmf.client.vertices.len())
        .unwrap();
    let d = bake_chunk(&map, 0, chunk.1, &draft).unwrap();
    let p = bake_chunk(&map, 0, chunk.1, &preview).unwrap();
    // Same vertices (lightmap UVs included) and geometry records; the air cells' light differs.
    assert!(d.pmf.client.vertices == p.pmf.client.vertices, "draft vertices differ");
    let geometry = |b: &pmfedit_bake::compile::ChunkBake| {
        b.pmf.client.cubes.iter().map(|c| c.geometry.clone()).collect::<Vec<_>>()
    };
    assert!(geometry(&d) == geometry(&p), "draft geometry records differ");
    assert!(d.pmf.common.cubes == p.pmf.common.cubes, "draft cube records differ");
    let sizes =
        |b: &pmfedit_bake::compile::ChunkBake| b.pmf.client.lightmaps.iter().map(|l| l.size_exp).collect::<Vec<_>>();
    assert_eq!(sizes(&d), sizes(&p));
    assert!(d.pmf.client.lightmaps != p.pmf.client.lightmaps, "soft shadows make no difference?");

    // Lighting already as cheap as a draft's (one emitter sample, draft sun/sky, no bounce).
    let cheap = CompileSettings { light: draft.light.clone(), ..CompileSettings::default() };
    assert!(!cheap.draft_differs());
    let s = Scheduler::new(1, cheap, Arc::new(|| {}));
    s.submit_urgent(map.clone(), [chunk]);
    s.wait_idle();
    let stages: Vec<Stage> = s.drain().iter().map(BakeEvent::stage).collect();
    assert_eq!(stages, [Stage::Full]);
}

/// An interactive scheduler's preview worker bakes a new preview while every general worker is
/// stuck in a full bake (held here on a gate that opens only after the preview arrived).
#[test]
fn an_interactive_preview_is_not_stuck_behind_running_full_bakes() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 3);
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let fulls_started = Arc::new(AtomicUsize::new(0));
    let (g, started) = (gate.clone(), fulls_started.clone());
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
        if stage == Stage::Full {
            started.fetch_add(1, Ordering::SeqCst);
            let (lock, cv) = &*g;
            let mut open = lock.lock().unwrap();
            while !*open {
                open = cv.wait(open).unwrap();
            }
        }
        bake_chunk(m, l, c, s)
    });
    let s = Scheduler::with_options(1, CompileSettings::default(), Arc::new(|| {}), bake, true);
    assert_eq!(s.threads(), 1, "the preview worker is not counted");
    // Full-only work occupies the one general worker…
    s.submit_full(map.clone(), k[..2].to_vec());
    let deadline = Instant::now() + Duration::from_secs(60);
    while fulls_started.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the general worker never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    // …and an edit's preview still arrives.
    s.submit(map.clone(), [k[2]]);
    let preview = loop {
        assert!(Instant::now() < deadline, "the preview waited behind the full bake");
        if let Some(BakeEvent::Baked { bake, stage: Stage::Preview, .. }) = s.try_recv() {
            break bake;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(preview.chunk, k[2].1);
    assert_eq!(fulls_started.load(Ordering::SeqCst), 1, "the full bake was still running");
    let (lock, cv) = &*gate;
    *lock.lock().unwrap() = true;
    cv.notify_all();
    s.wait_idle();
}

/// Warm-ups ([`Scheduler::warm`]) leave each listed chunk's light memo and deliver nothing; a
/// chunk that has a memo is skipped; a newer list replaces the older one.
#[test]
fn warm_ups_leave_light_memos_and_deliver_nothing() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 4);
    let s = Scheduler::new(2, CompileSettings::default(), Arc::new(|| {}));
    let light = s.light_cache().clone();
    assert!(k.iter().all(|&(l, c)| light.get(l, c).is_none()));
    s.warm(map.clone(), k[..3].to_vec());
    until(|| s.warming() == (0, false));
    assert_eq!(s.warmed(), 3);
    assert!(k[..3].iter().all(|&(l, c)| light.get(l, c).is_some()), "a warmed chunk has no memo");
    assert!(light.get(k[3].0, k[3].1).is_none(), "an unlisted chunk was warmed");
    assert!(s.drain().is_empty(), "a warm-up delivered a bake");
    // Listed again with one more: only the one without a memo is baked.
    s.warm(map.clone(), k.clone());
    until(|| s.warming() == (0, false));
    assert_eq!(s.warmed(), 4);
    assert!(light.get(k[3].0, k[3].1).is_some());
    // A full bake after the warm-up is the same as one from scratch (it starts from the memo).
    s.submit_full(map.clone(), [k[0]]);
    s.wait_idle();
    match s.drain().pop() {
        Some(BakeEvent::Baked { bake, .. }) => {
            assert_eq!(*bake, bake_chunk(&map, 0, k[0].1, &CompileSettings::default()).unwrap())
        }
        other => panic!("{other:?}"),
    }
}

/// No warm-up starts while a job waits or runs, nor until the pool has been idle for
/// [`pmfedit_bake::scheduler::WARM_AFTER`]; warm-ups are previews whose results are dropped.
#[test]
fn warm_ups_wait_for_an_idle_pool() {
    let map = Arc::new(sample::demo());
    let k = keys(&map, 4);
    let gate = Arc::new(Gate::default());
    type Timed = Arc<Mutex<Vec<(Stage, ChunkCoord, Instant)>>>;
    let (g, runs): (_, Timed) = (gate.clone(), Arc::new(Mutex::new(Vec::new())));
    let r = runs.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
        if stage == Stage::Full {
            g.wait();
        }
        r.lock().unwrap().push((stage, c, Instant::now()));
        bake_chunk(m, l, c, s)
    });
    let s = Scheduler::with_options(2, CompileSettings::default(), Arc::new(|| {}), bake, false);
    s.submit_full(map.clone(), [k[0]]);
    s.warm(map.clone(), k[1..].to_vec());
    std::thread::sleep(Duration::from_millis(300) + pmfedit_bake::scheduler::WARM_AFTER);
    assert!(runs.lock().unwrap().is_empty(), "warmed up while a job ran");
    assert_eq!(s.warming(), (3, false));
    gate.open();
    s.wait_idle();
    let idle = Instant::now();
    until(|| s.warming() == (0, false));
    let runs = runs.lock().unwrap().clone();
    let order: Vec<(Stage, ChunkCoord)> = runs.iter().map(|&(st, c, _)| (st, c)).collect();
    let expected: Vec<(Stage, ChunkCoord)> =
        std::iter::once((Stage::Full, k[0].1)).chain(k[1..].iter().map(|&(_, c)| (Stage::Preview, c))).collect();
    assert_eq!(order, expected, "the full job, then a preview per listed chunk in list order");
    let waited = runs[1].2.saturating_duration_since(idle);
    assert!(
        waited >= pmfedit_bake::scheduler::WARM_AFTER - Duration::from_millis(50),
        "warmed up {waited:?} after idle"
    );
    assert_eq!(s.drain().len(), 1, "only the full job is delivered");
}

/// The light memos follow the camera until a focus is set ([`Scheduler::set_focus`], the editor's
/// view centre), then the focus whatever the camera does.
#[test]
fn an_explicit_light_focus_outlasts_camera_moves() {
    let s = Scheduler::new(1, CompileSettings::default(), Arc::new(|| {}));
    let (a, b, c) = (DVec3::new(1.0, 2.0, 3.0), DVec3::new(-5.0, 0.0, 9.0), DVec3::new(40.0, 50.0, 60.0));
    s.set_camera(0, a);
    assert_eq!(s.light_cache().focus(), Some((0, a)));
    s.set_focus(0, b);
    s.set_camera(0, c);
    assert_eq!(s.light_cache().focus(), Some((0, b)), "the camera moved the focus");
}
