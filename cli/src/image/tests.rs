//! Tests of image decoding and saving.

use std::os::unix::fs::PermissionsExt;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

use super::{OutputDir, decode_image};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xfb\xff";

#[test]
fn data_urls_take_the_extension_of_their_media_type() {
    let data = STANDARD.encode(b"not really a gif");
    for (media_type, extension) in [
        ("image/png", ".png"),
        ("image/jpeg", ".jpg"),
        ("IMAGE/GIF", ".gif"),
        ("image/webp", ".webp"),
        ("image/svg+xml", ".bin"),
        ("", ".bin"),
    ] {
        let url = format!("data:{media_type};base64,{data}");
        let (bytes, ext) = decode_image(&url).unwrap();
        assert_eq!((bytes.as_slice(), ext), (b"not really a gif".as_slice(), extension), "{url}");
    }
    let with_parameter = format!("data:image/png;name=x;BASE64,{data}");
    assert_eq!(decode_image(&with_parameter).unwrap().1, ".png");
    assert_eq!(decode_image("data:image/png,plain"), None);
    assert_eq!(decode_image("data:image/png;base64,*"), None);
}

#[test]
fn bare_base64_in_four_encodings_takes_the_extension_of_its_magic_bytes() {
    for engine in [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD] {
        assert_eq!(decode_image(&engine.encode(PNG)), Some((PNG.to_vec(), ".png")));
    }
    let magic: [(&[u8], &str); 5] = [
        (b"\xff\xd8\xff\xe0rest", ".jpg"),
        (b"GIF89a...", ".gif"),
        (b"GIF87a...", ".gif"),
        (b"RIFF\0\0\0\0WEBPVP8 ", ".webp"),
        (b"plain text", ".bin"),
    ];
    for (bytes, extension) in magic {
        assert_eq!(decode_image(&STANDARD.encode(bytes)).unwrap().1, extension);
    }
}

#[test]
fn strings_that_do_not_decode_are_no_images() {
    for text in ["", "not base64!", "a", "https://example.com/x.png"] {
        assert_eq!(decode_image(text), None, "{text}");
    }
}

#[test]
fn saving_never_overwrites() {
    let temp = tempfile::tempdir().unwrap();
    let out = temp.path().join("new/dir");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("output-1.png"), b"old").unwrap();
    std::fs::write(out.join("output-1-2.png"), b"old").unwrap();
    let mut dir = OutputDir::new(Some(out.clone()));
    let first = dir.save(PNG, ".png").unwrap();
    assert_eq!(first, out.join("output-1-3.png"));
    assert_eq!(std::fs::read(&first).unwrap(), PNG);
    assert_eq!(std::fs::read(out.join("output-1.png")).unwrap(), b"old");
    let mode = std::fs::metadata(&first).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & !0o022, 0o644 & !0o022);
    assert_eq!(dir.save(b"x", ".bin").unwrap(), out.join("output-2.bin"));
}

#[test]
fn without_out_a_temporary_directory_is_made_once() {
    let mut dir = OutputDir::new(None);
    let first = dir.save(b"a", ".bin").unwrap();
    let second = dir.save(b"b", ".bin").unwrap();
    let parent = first.parent().unwrap().to_path_buf();
    assert_eq!(second.parent().unwrap(), parent);
    assert!(parent.file_name().unwrap().to_str().unwrap().starts_with("termsprawlctl-"));
    assert_eq!(first.file_name().unwrap(), "output-1.bin");
    std::fs::remove_dir_all(parent).unwrap();
}
