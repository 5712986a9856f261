//! Duplicate keys in the `{ … }` maps of a RON text.
//!
//! Deserialising a RON map into a `BTreeMap` keeps the last of two equal keys and drops the
//! first without a word, and the next save makes the loss permanent. [`first_duplicate_key`]
//! finds such a key, with its position, before the text is deserialised. It is a scanner, not a
//! parser: it tracks brackets, strings and comments, and compares each map's keys as written
//! (after trimming), which is exact for the manifest's keys (integer ids).

/// A key written twice in one map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The key as written.
    pub key: String,
    /// 1-based line and column of the second occurrence.
    pub position: (usize, usize),
    /// 1-based line of the first occurrence.
    pub first_line: usize,
}

/// One open bracket: for a `{` map, the keys seen so far and the key being read.
struct Frame {
    open: char,
    keys: Vec<(String, usize)>,
    /// Whether the next token starts a key (after `{` or a `,` at this level).
    expect_key: bool,
    /// Byte offset where the current key started, while reading one.
    key_start: Option<usize>,
}

/// The first key that occurs twice in one `{ … }` map of `text`, if any.
pub fn first_duplicate_key(text: &str) -> Option<DuplicateKey> {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    let position = |at: usize| {
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    };
    while i < bytes.len() {
        let b = bytes[i];
        // A token other than whitespace starts a key where one is expected.
        if let Some(top) = stack.last_mut()
            && top.open == '{'
            && top.expect_key
            && !b.is_ascii_whitespace()
            && b != b'}'
            && !text[i..].starts_with("//")
            && !text[i..].starts_with("/*")
        {
            top.expect_key = false;
            top.key_start = Some(i);
        }
        match b {
            b'"' => i = skip_string(bytes, i),
            b'r' if is_raw_string(bytes, i) => i = skip_raw_string(bytes, i),
            b'\'' => i = skip_char(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(bytes.len(), |n| i + 2 + n + 2);
                continue;
            }
            b'(' | b'[' | b'{' => {
                stack.push(Frame { open: b as char, keys: Vec::new(), expect_key: b == b'{', key_start: None });
            }
            b')' | b']' | b'}' => {
                stack.pop();
            }
            b':' => {
                if let Some(top) = stack.last_mut()
                    && top.open == '{'
                    && let Some(start) = top.key_start.take()
                {
                    let key = text[start..i].trim().to_owned();
                    let (line, _) = position(start);
                    if let Some((_, first_line)) = top.keys.iter().find(|(k, _)| *k == key) {
                        return Some(DuplicateKey { key, position: position(start), first_line: *first_line });
                    }
                    top.keys.push((key, line));
                }
            }
            b',' => {
                if let Some(top) = stack.last_mut()
                    && top.open == '{'
                {
                    top.expect_key = true;
                    top.key_start = None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the closing quote of the string starting at `i` (escapes skipped).
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Whether a raw string (`r"…"`, `r#"…"#`) starts at `i` (not a raw identifier `r#name`).
fn is_raw_string(bytes: &[u8], i: usize) -> bool {
    let hashes = bytes[i + 1..].iter().take_while(|&&b| b == b'#').count();
    bytes.get(i + 1 + hashes) == Some(&b'"')
}

/// The index of the last byte of the raw string (`r"…"`, `r#"…"#`) starting at `i`.
fn skip_raw_string(bytes: &[u8], i: usize) -> usize {
    let hashes = bytes[i + 1..].iter().take_while(|&&b| b == b'#').count();
    let body = i + 1 + hashes + 1;
    let mut j = body;
    while j < bytes.len() {
        if bytes[j] == b'"' && bytes[j + 1..].iter().take(hashes).filter(|&&b| b == b'#').count() == hashes {
            return j + hashes;
        }
        j += 1;
    }
    bytes.len()
}

/// The index of the closing quote of the char literal starting at `i`.
fn skip_char(bytes: &[u8], i: usize) -> usize {
    match bytes.get(i + 1) {
        Some(b'\\') => bytes[i + 2..].iter().position(|&b| b == b'\'').map_or(bytes.len(), |n| i + 2 + n),
        _ => bytes[i + 1..].iter().skip(1).position(|&b| b == b'\'').map_or(bytes.len(), |n| i + 2 + n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_second_occurrence() {
        let text = "(\n  items: {\n    0: (name: \"a\"),\n    1: (name: \"b\"),\n    0: (name: \"c\"),\n  },\n)";
        let d = first_duplicate_key(text).unwrap();
        assert_eq!((d.key.as_str(), d.position, d.first_line), ("0", (5, 5), 3));
    }

    #[test]
    fn maps_are_separate_and_strings_comments_and_structs_are_not_keys() {
        for ok in [
            "(a: {0: 1, 1: 2}, b: {0: 1, 1: 2})",
            "{0: (x: 1, x: 2)}", // struct fields: serde reports those itself
            "{\"a:b\": 1, \"a\": {\"a\": 2}}",
            "{0: \"0: 1, 0: 2\", 1: 'x', 2: r#\"0: \"#}",
            "{0: 1, // 0: 2\n 1: 2 /* 1: 3, */}",
            "{0: [0, 0], 1: {0: 1}}",
            "(items: {}, next: {})",
            "{r#type: 1, r#kind: 2}",
        ] {
            assert_eq!(first_duplicate_key(ok), None, "{ok}");
        }
        assert_eq!(first_duplicate_key("{0: {1: 1, 1: 2}}").map(|d| d.key), Some("1".to_owned()));
        assert_eq!(first_duplicate_key("{ 7 : 1 ,\n7: 2 }").map(|d| d.position), Some((2, 1)));
    }
}
