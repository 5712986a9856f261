//! How soon a repaint that nobody asked for by hand comes: background repaints at a bounded
//! share of the UI thread.
//!
//! Bakes arriving (the scheduler's wake), meshes to upload while chunks bake, thumbnails loaded and
//! animated materials ask for repaints. On a big map a frame takes the UI thread hundreds of
//! milliseconds under software GL (and the raster threads with it), so drawing one for every
//! arriving bake took as much CPU as the bakes while an open's thousands of bakes streamed in. Such
//! a repaint now waits [`background_delay`]: about three times what the last frame cost, so
//! background frames take at most a quarter of the UI thread's time ([`DUTY`], as eframe counts a
//! frame: not the buffer swap), and never more than [`MAX_DELAY`], so the view still fills in
//! about once a second. A frame of a few milliseconds (a GPU, a small map) waits as long again:
//! about 60 frames a second, as before. Repaints from input are egui's own and never wait, and for
//! [`INPUT_GRACE`] after the last input the background repaints do not wait either: an edit's
//! re-baked chunks show the moment they arrive.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The share of the time background frames may take.
pub const DUTY: f64 = 0.25;
/// The longest a background repaint waits.
pub const MAX_DELAY: Duration = Duration::from_secs(1);
/// How long after the last input background repaints come at once.
pub const INPUT_GRACE: Duration = Duration::from_secs(2);

/// How long a background repaint waits after a frame that cost `frame_cost`, with the last
/// input `since_input` ago (`None`: none yet).
pub fn background_delay(frame_cost: Duration, since_input: Option<Duration>) -> Duration {
    if since_input.is_some_and(|s| s < INPUT_GRACE) {
        return Duration::ZERO;
    }
    frame_cost.mul_f64(1.0 / DUTY - 1.0).min(MAX_DELAY)
}

/// Whether `event` is the user's input for [`INPUT_GRACE`]: not what the window system sends on
/// its own. Under Xvfb the window's focus and the pointer leaving came as events at start-up, so
/// an open's first two seconds counted as "just after input" and its frames were not paced.
pub fn counts_as_input(event: &eframe::egui::Event) -> bool {
    use eframe::egui::Event;
    !matches!(event, Event::WindowFocused(_) | Event::PointerGone | Event::ModifiersChanged(_))
}

/// The delay of background repaints, shared with the threads that ask for them (the scheduler's
/// wake runs on the bake workers).
#[derive(Debug, Default)]
pub struct Pace {
    delay_us: AtomicU64,
}

impl Pace {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The delay now.
    pub fn delay(&self) -> Duration {
        Duration::from_micros(self.delay_us.load(Ordering::Relaxed))
    }

    /// Sets the delay after a frame ([`background_delay`]).
    pub fn update(&self, frame_cost: Duration, since_input: Option<Duration>) {
        let d = background_delay(frame_cost, since_input);
        self.delay_us.store(u64::try_from(d.as_micros()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_frames_take_at_most_a_quarter_of_the_time() {
        let ms = Duration::from_millis;
        // A frame of 4 ms (a GPU): 12 ms, about 60 frames a second with the frame.
        assert_eq!(background_delay(ms(4), None), ms(12));
        // 200 ms (the terrain under software GL): 600 ms, a quarter of each 800.
        assert_eq!(background_delay(ms(200), Some(Duration::from_secs(5))), ms(600));
        // Never more than a second.
        assert_eq!(background_delay(ms(900), None), MAX_DELAY);
        // Just after input: at once, whatever the frame cost.
        assert_eq!(background_delay(ms(900), Some(ms(300))), Duration::ZERO);
        assert_eq!(background_delay(ms(900), Some(INPUT_GRACE)), MAX_DELAY);
        let pace = Pace::new();
        assert_eq!(pace.delay(), Duration::ZERO);
        // The window system's own events are not input; a key or a click is.
        use eframe::egui::{Event, Key, Modifiers, PointerButton, pos2};
        assert!(!counts_as_input(&Event::WindowFocused(true)));
        assert!(!counts_as_input(&Event::PointerGone));
        assert!(!counts_as_input(&Event::ModifiersChanged(Modifiers::SHIFT)));
        let key =
            Event::Key { key: Key::A, physical_key: None, pressed: true, repeat: false, modifiers: Modifiers::NONE };
        assert!(counts_as_input(&key));
        let click = Event::PointerButton {
            pos: pos2(1.0, 1.0),
            button: PointerButton::Primary,
            pressed: true,
            modifiers: Modifiers::NONE,
        };
        assert!(counts_as_input(&click));
        assert!(counts_as_input(&Event::PointerMoved(pos2(3.0, 4.0))));
        pace.update(ms(100), None);
        assert_eq!(pace.delay(), ms(300));
    }
}
