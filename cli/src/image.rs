//! Image values of the direct form (`spec/shell-conventions.md` §9): base64 data is never
//! printed; the bytes are saved to a file whose path is printed instead.

use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

/// How many names `output-N-k<ext>` are tried before giving up.
const NAME_ATTEMPTS: usize = 10_000;

/// The bytes of an image value's `image` string and the file extension they get, or `None` when
/// the string decodes neither as a base64 `data:` URL nor as bare base64.
pub(crate) fn decode_image(text: &str) -> Option<(Vec<u8>, &'static str)> {
    if let Some(url) = strip_prefix_ignore_case(text, "data:") {
        let (meta, data) = url.split_once(',')?;
        let media_type = strip_suffix_ignore_case(meta, ";base64")?;
        let media_type = media_type.split(';').next().unwrap_or_default().trim();
        let bytes = decode_base64(data)?;
        return Some((bytes, extension_for_media_type(media_type)));
    }
    let bytes = decode_base64(text)?;
    let extension = extension_for_magic(&bytes);
    Some((bytes, extension))
}

/// Decodes base64 in the standard or URL-safe alphabet, padded or not; empty data is no image.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    if text.is_empty() {
        return None;
    }
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
}

fn extension_for_media_type(media_type: &str) -> &'static str {
    match media_type.to_ascii_lowercase().as_str() {
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        _ => ".bin",
    }
}

fn extension_for_magic(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        ".png"
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        ".jpg"
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        ".gif"
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        ".webp"
    } else {
        ".bin"
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

fn strip_suffix_ignore_case<'a>(text: &'a str, suffix: &str) -> Option<&'a str> {
    let split = text.len().checked_sub(suffix.len())?;
    let tail = text.get(split..)?;
    tail.eq_ignore_ascii_case(suffix).then(|| &text[..split])
}

/// Where this run saves files: `--out DIR`, or a temporary directory made on the first save.
#[derive(Debug)]
pub(crate) struct OutputDir {
    given: Option<PathBuf>,
    temporary: Option<PathBuf>,
    saved: usize,
}

impl OutputDir {
    /// Files go to `given` when set (created with mode 0755 if missing), else to a fresh
    /// temporary directory named `termsprawlctl-*`.
    pub(crate) fn new(given: Option<PathBuf>) -> OutputDir {
        OutputDir { given, temporary: None, saved: 0 }
    }

    /// Saves `bytes` as `output-N<ext>`, never overwriting a file; the path as printed.
    pub(crate) fn save(&mut self, bytes: &[u8], extension: &str) -> Result<PathBuf, String> {
        let directory = self.directory()?;
        self.saved += 1;
        for attempt in 1..=NAME_ATTEMPTS {
            let name = if attempt == 1 {
                format!("output-{}{extension}", self.saved)
            } else {
                format!("output-{}-{attempt}{extension}", self.saved)
            };
            let path = directory.join(name);
            match create_new(&path) {
                Ok(mut file) => {
                    file.write_all(bytes)
                        .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
                    return Ok(path);
                }
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(format!("cannot create {}: {error}", path.display())),
            }
        }
        Err(format!(
            "cannot find a free name for output-{}{extension} in {}",
            self.saved,
            directory.display()
        ))
    }

    fn directory(&mut self) -> Result<PathBuf, String> {
        if let Some(given) = &self.given {
            DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(given)
                .map_err(|error| format!("cannot create {}: {error}", given.display()))?;
            return Ok(given.clone());
        }
        if let Some(temporary) = &self.temporary {
            return Ok(temporary.clone());
        }
        let temporary = tempfile::Builder::new()
            .prefix("termsprawlctl-")
            .tempdir()
            .map_err(|error| format!("cannot create a temporary directory: {error}"))?
            .keep();
        self.temporary = Some(temporary.clone());
        Ok(temporary)
    }
}

fn create_new(path: &Path) -> io::Result<std::fs::File> {
    OpenOptions::new().write(true).create_new(true).mode(0o644).open(path)
}

#[cfg(test)]
mod tests;
