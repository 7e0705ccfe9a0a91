//! The vectors file: how a [`VectorStore`] is written, read whole, and
//! opened with its rows left in the file.
//!
//! The file `groundcite-vectors.bin` sits beside the manifest:
//!
//! ```text
//! b"GCVEC3\n"                      magic and format version
//! u64 LE  header length            then the header, JSON:
//!   {"model_id": "...", "dim": 384,
//!    "files": [{"key": "...", "ids": ["path#L1-L9", ...],
//!               "units": [3, 0, ...]}, ...]}   units per chunk
//! f32 LE  vectors                  per file, in header order: one row of
//!                                  `dim` per id, then one per unit (chunk
//!                                  after chunk)
//! u64 LE  ANN length               0, or the length of the approximate
//!                                  index that follows: `ann::Ivf::encode`,
//!                                  then `ann::SignCodes::encode` of every
//!                                  unit in the rows' order (absent in
//!                                  files written before them)
//! ```
//!
//! A file of format 2 (no ANN section) reads with no approximate index:
//! search is exact until the next ingest writes one. A file of format 1
//! (`GCVEC1`, chunk vectors only) reads as vectors of a model named
//! `MODEL (format 1, no unit vectors)`: the next ingest re-embeds
//! everything and says the model changed; until then the engine refuses
//! the index with the hint to ingest again.
//!
//! Written like the manifest: a temporary file, synced, renamed.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Ann, FileVectors, VECTORS_FILE, VectorStore};
use crate::ann::{Ivf, SignCodes};
use crate::{Error, Result};

pub(super) const MAGIC: &[u8] = b"GCVEC3\n";
pub(super) const MAGIC_V2: &[u8] = b"GCVEC2\n";
pub(super) const MAGIC_V1: &[u8] = b"GCVEC1\n";

/// A vectors file whose rows are read at need, by offset: the file stays
/// open, so an ingest that replaces it (a new file renamed over it) leaves
/// this store reading the rows it was opened with.
#[derive(Debug)]
pub(super) struct RowFile {
    path: PathBuf,
    file: fs::File,
    /// Each file's first chunk row, in bytes from the start, in key order
    /// (the order of `Ann::keys`); its unit rows follow its chunk rows.
    at: Vec<u64>,
    /// Values a row.
    dim: usize,
}

impl PartialEq for RowFile {
    fn eq(&self, other: &RowFile) -> bool {
        self.path == other.path && self.at == other.at && self.dim == other.dim
    }
}

impl RowFile {
    /// Fills `out` with the values stored from byte `offset`.
    fn read(&self, offset: u64, out: &mut [f32]) -> Result<()> {
        read_exact_at(&self.file, bytemuck::cast_slice_mut(out), offset).map_err(|e| {
            Error::Io {
                path: self.path.clone(),
                error: e,
            }
        })?;
        if cfg!(target_endian = "big") {
            for v in out.iter_mut() {
                *v = f32::from_bits(u32::from_le(v.to_bits()));
            }
        }
        Ok(())
    }

    /// Fills `out` with the rows of file `f` from chunk row `i`.
    pub(super) fn read_chunks(&self, f: usize, i: usize, out: &mut [f32]) -> Result<()> {
        self.read(self.at[f] + (i * self.dim * 4) as u64, out)
    }

    /// Fills `out` with the unit rows of file `f` (which has `chunks`
    /// chunks) from unit `start`.
    pub(super) fn read_units(
        &self,
        f: usize,
        chunks: usize,
        start: usize,
        out: &mut [f32],
    ) -> Result<()> {
        self.read_chunks(f, chunks + start, out)
    }

    /// File `f`'s chunk rows and unit rows, read whole.
    pub(super) fn file_rows(&self, f: usize, file: &FileVectors) -> Result<(Vec<f32>, Vec<f32>)> {
        let mut data = vec![0.0; file.ids.len() * self.dim];
        let units: usize = file.unit_counts.iter().map(|&n| n as usize).sum();
        let mut unit_data = vec![0.0; units * self.dim];
        self.read_chunks(f, 0, &mut data)?;
        self.read_units(f, file.ids.len(), 0, &mut unit_data)?;
        Ok((data, unit_data))
    }
}

#[cfg(unix)]
fn read_exact_at(file: &fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &fs::File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[derive(Serialize, Deserialize)]
struct Header {
    model_id: String,
    dim: usize,
    files: Vec<HeaderFile>,
}

#[derive(Serialize, Deserialize)]
struct HeaderFile {
    key: String,
    ids: Vec<String>,
    /// Absent in format 1.
    #[serde(default)]
    units: Vec<u32>,
}

impl VectorStore {
    /// Reads the store in `dir` with every row in memory; an empty store
    /// when there is no file.
    pub fn read(dir: &Path) -> Result<VectorStore> {
        let path = dir.join(VECTORS_FILE);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(VectorStore::default());
            }
            Err(e) => return Err(Error::Io { path, error: e }),
        };
        decode(&bytes).map_err(|message| Error::Manifest { path, message })
    }

    /// Opens the store in `dir` for search: a store with an approximate
    /// index reads its header and approximate index and leaves the rows in
    /// the file ([`VectorStore::is_on_disk`]); any other is read whole
    /// ([`VectorStore::read`]). An empty store when there is no file.
    pub fn open(dir: &Path) -> Result<VectorStore> {
        let path = dir.join(VECTORS_FILE);
        let mut file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(VectorStore::default());
            }
            Err(e) => return Err(Error::Io { path, error: e }),
        };
        let io = |e| Error::Io {
            path: path.clone(),
            error: e,
        };
        let manifest = |message| Error::Manifest {
            path: path.clone(),
            message,
        };
        let size = file.metadata().map_err(io)?.len();
        let mut bytes = vec![0u8; MAGIC.len() + 8];
        if size < bytes.len() as u64 {
            return VectorStore::read(dir);
        }
        file.read_exact(&mut bytes).map_err(io)?;
        let json_len = u64::from_le_bytes(bytes[MAGIC.len()..].try_into().expect("8 bytes"));
        if !bytes.starts_with(MAGIC) || json_len > size {
            // Another format, or damaged: read whole, which says how.
            return VectorStore::read(dir);
        }
        bytes.resize(bytes.len() + json_len as usize, 0);
        file.read_exact(&mut bytes[MAGIC.len() + 8..]).map_err(io)?;
        let head = parse_head(&bytes).map_err(manifest)?;
        let ann_at = (head.len + head.vector_bytes) as u64;
        let mut ann_len = [0u8; 8];
        if ann_at + 8 > size {
            return VectorStore::read(dir);
        }
        read_exact_at(&file, &mut ann_len, ann_at).map_err(io)?;
        let ann_len = u64::from_le_bytes(ann_len);
        if ann_len == 0 || ann_at + 8 + ann_len != size {
            // No approximate index (or damaged): the rest of the file, after
            // the head already read, decoded with it.
            file.read_to_end(&mut bytes).map_err(io)?;
            return decode_rows(head, &bytes).map_err(manifest);
        }
        let mut ann = vec![0u8; ann_len as usize];
        read_exact_at(&file, &mut ann, ann_at + 8).map_err(io)?;
        let mut at = Vec::with_capacity(head.header.files.len());
        let mut offset = head.len as u64;
        let mut files = BTreeMap::new();
        for f in head.header.files {
            at.push(offset);
            let units: u64 = f.units.iter().map(|&n| u64::from(n)).sum();
            offset += (f.ids.len() as u64 + units) * head.header.dim as u64 * 4;
            files.insert(
                f.key,
                FileVectors {
                    ids: f.ids,
                    data: Vec::new(),
                    unit_counts: f.units,
                    unit_data: Vec::new(),
                },
            );
        }
        let mut store = VectorStore::unchecked(head.header.model_id, head.header.dim, files);
        store.ann = Some(store.ann_of(&ann).map_err(manifest)?);
        store.disk = Some(Arc::new(RowFile {
            path,
            file,
            at,
            dim: store.dim,
        }));
        Ok(store)
    }

    /// The approximate index encoded in `bytes`, for this store's chunks:
    /// the inverted file, then (from this version on) the units' sign
    /// codes.
    fn ann_of(&self, bytes: &[u8]) -> std::result::Result<Ann, String> {
        let (ivf, used) = Ivf::decode_prefix(bytes)?;
        if ivf.len() != self.len() || (!ivf.is_empty() && ivf.dim() != self.dim) {
            return Err(format!(
                "an ANN index of {} rows for {} chunks",
                ivf.len(),
                self.len()
            ));
        }
        let units = match &bytes[used..] {
            [] => None,
            rest => {
                let codes = SignCodes::decode(rest)?;
                let want: usize = self
                    .files
                    .values()
                    .flat_map(|f| &f.unit_counts)
                    .map(|&c| c as usize)
                    .sum();
                if codes.len() != want || (!codes.is_empty() && codes.dim() != self.dim) {
                    return Err(format!(
                        "unit codes of {} rows for {want} answer units",
                        codes.len()
                    ));
                }
                Some(codes)
            }
        };
        Ok(Ann::new(ivf, units, &self.files))
    }

    /// Writes the store into `dir` atomically (temporary file, sync,
    /// rename); a store on disk is read whole first.
    pub fn write(&self, dir: &Path) -> Result<()> {
        if self.disk.is_some() {
            return self.to_resident()?.write(dir);
        }
        let path = dir.join(VECTORS_FILE);
        let tmp: PathBuf = path.with_extension("bin.tmp");
        let io = |e| Error::Io {
            path: tmp.clone(),
            error: e,
        };
        {
            let f = fs::File::create(&tmp).map_err(io)?;
            let mut out = std::io::BufWriter::with_capacity(1 << 20, f);
            self.encode_to(&mut out).map_err(io)?;
            let f = out.into_inner().map_err(|e| io(e.into_error()))?;
            f.sync_all().map_err(io)?;
        }
        fs::rename(&tmp, &path).map_err(|e| Error::Io { path, error: e })
    }

    /// Writes the file's bytes, of a store in memory, to `out` (streamed:
    /// a million chunks' rows are 9.8 GB).
    fn encode_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        let header = Header {
            model_id: self.model_id.clone(),
            dim: self.dim,
            files: self
                .files
                .iter()
                .map(|(key, f)| HeaderFile {
                    key: key.clone(),
                    ids: f.ids.clone(),
                    units: f.unit_counts.clone(),
                })
                .collect(),
        };
        let json = serde_json::to_vec(&header).expect("a header of strings serialises");
        out.write_all(MAGIC)?;
        out.write_all(&(json.len() as u64).to_le_bytes())?;
        out.write_all(&json)?;
        let mut bytes = Vec::new();
        for f in self.files.values() {
            for rows in [&f.data, &f.unit_data] {
                bytes.clear();
                bytes.extend(rows.iter().flat_map(|v| v.to_le_bytes()));
                out.write_all(&bytes)?;
            }
        }
        let mut ann = Vec::new();
        if let Some(a) = &self.ann {
            a.ivf.encode(&mut ann);
            if let Some(units) = &a.units {
                units.encode(&mut ann);
            }
        }
        out.write_all(&(ann.len() as u64).to_le_bytes())?;
        out.write_all(&ann)
    }

    /// The file's bytes, of a store in memory.
    #[cfg(test)]
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_to(&mut out).expect("a Vec takes every byte");
        out
    }
}

/// A vectors file's magic and header, checked.
struct Head {
    version: u8,
    header: Header,
    /// Bytes of the magic, the header length and the header: where the
    /// rows start.
    len: usize,
    /// Bytes of rows the header announces.
    vector_bytes: usize,
}

/// The head of a vectors file at the start of `bytes` (which may go on).
fn parse_head(bytes: &[u8]) -> std::result::Result<Head, String> {
    let (rest, version) = if let Some(rest) = bytes.strip_prefix(MAGIC) {
        (rest, 3)
    } else if let Some(rest) = bytes.strip_prefix(MAGIC_V2) {
        (rest, 2)
    } else if let Some(rest) = bytes.strip_prefix(MAGIC_V1) {
        (rest, 1)
    } else {
        return Err("not a groundcite vectors file (bad magic)".into());
    };
    let (len, rest) = rest
        .split_first_chunk::<8>()
        .ok_or("truncated: no header length")?;
    let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| "header too long")?;
    if rest.len() < len {
        return Err("truncated header".into());
    }
    let mut header: Header =
        serde_json::from_slice(&rest[..len]).map_err(|e| format!("header: {e}"))?;
    if version == 1 {
        for f in &mut header.files {
            f.units = vec![0; f.ids.len()];
        }
        header.model_id = format!("{} (format 1, no unit vectors)", header.model_id);
    }
    let mut rows = 0usize;
    for f in &header.files {
        if f.units.len() != f.ids.len() {
            return Err(format!(
                "file {:?}: {} unit counts for {} chunks",
                f.key,
                f.units.len(),
                f.ids.len()
            ));
        }
        rows += f.ids.len() + f.units.iter().map(|&n| n as usize).sum::<usize>();
    }
    let vector_bytes = header
        .dim
        .checked_mul(4)
        .and_then(|b| rows.checked_mul(b))
        .ok_or("too many vectors")?;
    Ok(Head {
        version,
        header,
        len: bytes.len() - rest.len() + len,
        vector_bytes,
    })
}

pub(super) fn decode(bytes: &[u8]) -> std::result::Result<VectorStore, String> {
    decode_rows(parse_head(bytes)?, bytes)
}

/// The store in `bytes`, a whole vectors file whose head is `head`.
fn decode_rows(head: Head, bytes: &[u8]) -> std::result::Result<VectorStore, String> {
    let mut data = &bytes[head.len..];
    let mut ann_bytes: &[u8] = &[];
    if head.version == 3 && data.len() >= head.vector_bytes {
        let (vectors, tail) = data.split_at(head.vector_bytes);
        let (len, ann) = tail
            .split_first_chunk::<8>()
            .ok_or("truncated: no ANN length after the vectors")?;
        if u64::from_le_bytes(*len) != ann.len() as u64 {
            return Err(format!(
                "an ANN section of {} bytes where its length says {}",
                ann.len(),
                u64::from_le_bytes(*len)
            ));
        }
        (data, ann_bytes) = (vectors, ann);
    }
    let dim = head.header.dim;
    if data.len() != head.vector_bytes {
        return Err(format!(
            "{} bytes of vectors for {} rows of {dim} values",
            data.len(),
            head.vector_bytes.checked_div(dim * 4).unwrap_or(0),
        ));
    }
    let mut values = |rows: usize| -> Vec<f32> {
        let (mine, next) = data.split_at(rows * dim * 4);
        data = next;
        mine.chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    };
    let mut files = BTreeMap::new();
    for f in head.header.files {
        let chunk_rows = values(f.ids.len());
        let unit_rows = values(f.units.iter().map(|&n| n as usize).sum());
        files.insert(
            f.key,
            FileVectors {
                ids: f.ids,
                data: chunk_rows,
                unit_counts: f.units,
                unit_data: unit_rows,
            },
        );
    }
    let mut store = VectorStore::unchecked(head.header.model_id, dim, files);
    if !ann_bytes.is_empty() {
        store.ann = Some(store.ann_of(ann_bytes)?);
    }
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ann::IvfParams;
    use crate::vectors::tests::{big_store, store};

    #[test]
    fn round_trips_through_the_file_format() {
        let s = store();
        assert_eq!(decode(&s.encode()).unwrap(), s);
        let empty = VectorStore::default();
        assert_eq!(decode(&empty.encode()).unwrap(), empty);
    }

    #[test]
    fn reads_format_1_as_another_model() {
        // Format 1: the same header without unit counts, chunk rows only.
        let json = br#"{"model_id":"toy","dim":2,"files":[{"key":"k","ids":["a#L1-L1"]}]}"#;
        let mut bytes = MAGIC_V1.to_vec();
        bytes.extend_from_slice(&(json.len() as u64).to_le_bytes());
        bytes.extend_from_slice(json);
        for v in [0.6f32, 0.8] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let old = decode(&bytes).unwrap();
        assert_eq!(old.model_id, "toy (format 1, no unit vectors)");
        assert!(!old.has("k", "toy"), "the next ingest re-embeds it");
        assert_eq!(old.files["k"].data, [0.6, 0.8]);
        assert!(old.units_of("k", "a#L1-L1").unwrap().unwrap().is_empty());
    }

    #[test]
    fn refuses_truncated_or_foreign_files() {
        let bytes = store().encode();
        assert!(
            decode(&bytes[..bytes.len() - 1])
                .unwrap_err()
                .contains("truncated")
        );
        assert!(
            decode(&bytes[..bytes.len() - 9])
                .unwrap_err()
                .contains("bytes of vectors")
        );
        assert!(decode(b"{}").unwrap_err().contains("magic"));
        assert!(decode(&bytes[..MAGIC.len() + 4]).is_err());
    }

    #[test]
    fn the_approximate_index_is_written_with_the_vectors_and_refreshed_by_size() {
        let mut s = big_store(2, 50);
        s.build_ann(&IvfParams::for_rows(100));
        let read = decode(&s.encode()).unwrap();
        assert!(read.has_ann());
        assert_eq!(read, s);
        // A damaged ANN section is an error, not exact search in silence.
        let mut bytes = s.encode();
        let n = bytes.len();
        bytes[n - 1] ^= 0xff;
        bytes.truncate(n - 3);
        assert!(decode(&bytes).unwrap_err().contains("ANN"));
        // Below ANN_MIN_CHUNKS an ingest drops it.
        s.refresh_ann();
        assert!(!s.has_ann());
        assert_eq!(decode(&s.encode()).unwrap(), s);
    }

    #[test]
    fn a_store_with_an_approximate_index_opens_with_its_rows_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = big_store(3, 1_000);
        s.build_ann(&IvfParams::for_rows(3_000));
        s.write(dir.path()).unwrap();
        let opened = VectorStore::open(dir.path()).unwrap();
        assert!(opened.is_on_disk() && opened.has_ann());
        assert!(opened.files().is_none(), "no rows in memory");
        assert_eq!(opened.len(), 3_000);
        let queries = [
            [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.3, -0.2, 0.5, 0.1, 0.0, 0.4, -0.6, 0.3],
        ];
        for q in queries {
            let named = ["f2.md#L999-L999", "f0.md#L1-L1", "no-such.md#L1-L1"];
            assert_eq!(
                opened.rank_for(&q, 10, &named).unwrap(),
                s.rank_for(&q, 10, &named).unwrap()
            );
            assert_eq!(opened.rank(&q).unwrap(), s.rank(&q).unwrap());
        }
        for (key, id) in [
            ("root\u{1f}f0.md", "f0.md#L0-L0"),
            ("root\u{1f}f1.md", "f1.md#L7-L7"),
            ("root\u{1f}f2.md", "f2.md#L999-L999"),
            ("root\u{1f}f2.md", "f2.md#L1000-L1000"),
            ("root\u{1f}f9.md", "f9.md#L1-L1"),
        ] {
            assert_eq!(
                opened.units_of(key, id).unwrap(),
                s.units_of(key, id).unwrap()
            );
        }
        assert_eq!(opened.to_resident().unwrap(), s);
        // An ingest renames a new file over it: the store opened before
        // reads the rows it was opened with.
        big_store(1, 10).write(dir.path()).unwrap();
        assert_eq!(
            opened.rank(&queries[1]).unwrap(),
            s.rank(&queries[1]).unwrap()
        );
        assert!(
            !VectorStore::open(dir.path()).unwrap().is_on_disk(),
            "a store with no approximate index is read whole"
        );
        opened.write(dir.path()).unwrap();
        assert_eq!(VectorStore::read(dir.path()).unwrap(), s, "rows written");
        // A damaged file is an error, as when read whole.
        let path = dir.path().join(VECTORS_FILE);
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let err = VectorStore::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("ANN"), "{err}");
        fs::remove_file(&path).unwrap();
        assert!(VectorStore::open(dir.path()).unwrap().is_empty());
    }

    #[test]
    fn unit_codes_of_another_count_are_an_error() {
        let mut s = big_store(2, 50);
        s.build_ann(&IvfParams::for_rows(100));
        let mut fewer = SignCodes::new(8);
        fewer.push_rows(&[0.5; 16]);
        s.ann.as_mut().unwrap().units = Some(fewer);
        let err = decode(&s.encode()).unwrap_err();
        assert!(err.contains("unit codes of 2 rows"), "{err}");
    }

    #[test]
    fn reads_format_2_with_exact_search() {
        let s = store();
        let mut bytes = s.encode();
        bytes[..MAGIC.len()].copy_from_slice(MAGIC_V2);
        bytes.truncate(bytes.len() - 8);
        let read = decode(&bytes).unwrap();
        assert!(!read.has_ann());
        assert_eq!(read, s);
    }
}
