"""A batch of record commits written as one Git pack file, in-process (canon/batch.py's fast path).

Every commit of a batch carries a full `knowledge/` tree; with thousands of records each new tree
is hundreds of kilobytes that differ from the previous one by one entry. Loose objects (pygit2)
compress every copy (quadratic: 3,000 records 19 s); `git fast-import` deltas each against the
previous version but still diffs and hashes them with SHA-1DC (10,000 records: ~19 s of CPU). Here
the tree is kept in memory, each new version is stored as a delta we know exactly (copy the
bytes before the changed entry, insert the entry, copy the rest), one full version every DEPTH so
no read walks a long delta chain, and objects are hashed with hashlib. The pack format is Git's
(Documentation/gitformat-pack.txt: pack v2 with OFS_DELTA objects and an index v2); the pack and
its index are written under temporary names and renamed into objects/pack/ (index last), so a
killed writer leaves no pack Git would read. Nothing refers to the objects until the caller
moves the branch. tests/test_import_batch.py checks the commits are identical to pygit2's.

Only record paths (`<dir>/<file>`, or `<dir>/<bucket>/<file>` fanned out: records/keys.py) are
handled; `supported()` says when to use it. A directory a retract empties is dropped from its parent
and never written: no delta yields or starts from the empty tree, and a delta's base is always an
earlier object of the same pack (the base commit's trees are read from the repo, written whole).
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from bisect import bisect_left
from pathlib import Path

DEPTH = 50  # a full tree every DEPTH versions of a directory, as fast-import's default depth
TREE_MODE = b"40000"
COMMIT, TREE, BLOB, OFS_DELTA = 1, 2, 3, 6


def supported(paths) -> bool:
    """Record paths: `<dir>/<file>` or `<dir>/<bucket>/<file>` (records/keys.py), nothing deeper."""
    return all(p.count("/") in (1, 2) and not p.startswith("/") and "\0" not in p and "//" not in p
               and not p.endswith("/") for p in paths)


def _obj_id(kind: bytes, data: bytes) -> bytes:
    h = hashlib.sha1(b"%s %d\0" % (kind, len(data)))
    h.update(data)
    return h.digest()


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _copy(offset: int, size: int) -> bytes:
    """Delta copy instructions for `size` bytes of the base from `offset` (at most 64 KiB each)."""
    out = bytearray()
    while size > 0:
        n = min(size, 0x10000)
        cmd, args = 0x80, bytearray()
        for i in range(4):
            b = (offset >> (8 * i)) & 0xFF
            if b:
                cmd |= 1 << i
                args.append(b)
        if n != 0x10000:
            for i in range(3):
                b = (n >> (8 * i)) & 0xFF
                if b:
                    cmd |= 1 << (4 + i)
                    args.append(b)
        out.append(cmd)
        out += args
        offset += n
        size -= n
    return bytes(out)


def _insert(data: bytes) -> bytes:
    out = bytearray()
    for i in range(0, len(data), 127):
        chunk = data[i:i + 127]
        out.append(len(chunk))
        out += chunk
    return bytes(out)


class _Dir:
    """One record directory's tree: sorted names, their serialized entries, and the pack history."""

    def __init__(self, entries: list[tuple[str, bytes, bytes]]):
        # (sort name, mode, raw id); trees sort as "name/"
        self.names: list[str] = []
        self.raw: list[bytes] = []
        for name, mode, oid in sorted(entries, key=lambda e: e[0] + ("/" if e[1] == TREE_MODE else "")):
            self.names.append(name + ("/" if mode == TREE_MODE else ""))
            self.raw.append(b"%s %s\0%s" % (mode, name.encode("utf-8"), oid))
        self.data = b"".join(self.raw)
        self.offsets: list[int] | None = None
        self.last_offset: int | None = None  # pack offset of the current version (the next delta's base)
        self.depth = 0  # delta chain length of the current version
        self.depths: dict[bytes, int] = {}

    def set(self, name: str, oid: bytes | None, mode: bytes = b"100644") -> tuple[int, int, bytes] | None:
        """Set or remove a file (or, with TREE_MODE, a subdirectory); returns (byte position, old entry
        length, new entry bytes) or None."""
        sort_name = name + "/" if mode == TREE_MODE else name
        i = bisect_left(self.names, sort_name)
        present = i < len(self.names) and self.names[i] == sort_name
        if self.offsets is None:
            self.offsets = []
            pos = 0
            for r in self.raw:
                self.offsets.append(pos)
                pos += len(r)
        pos = self.offsets[i] if i < len(self.offsets) else len(self.data)
        new = b"" if oid is None else b"%s %s\0%s" % (mode, name.encode("utf-8"), oid)
        old_len = len(self.raw[i]) if present else 0
        if not present and oid is None:
            return None
        if present:
            if oid is None:
                del self.names[i], self.raw[i], self.offsets[i]
            else:
                self.raw[i] = new
        else:
            self.names.insert(i, sort_name)
            self.raw.insert(i, new)
            self.offsets.insert(i, pos)
        shift = len(new) - old_len
        if shift:
            for j in range(i + (0 if oid is None else 1), len(self.offsets)):
                self.offsets[j] += shift
        self.data = self.data[:pos] + new + self.data[pos + old_len:]
        return pos, old_len, new


class PackWriter:
    def __init__(self, pack_dir: Path):
        self.pack_dir = Path(pack_dir)
        self.tmp = self.pack_dir / f"tmp_pack_kyb_{os.getpid()}"
        self.f = open(self.tmp, "wb")
        self.f.write(b"PACK" + struct.pack(">II", 2, 0))  # the count is patched at the end
        self.offset = 12
        self.index: list[tuple[bytes, int, int]] = []  # (id, crc32, offset)
        self.seen: dict[bytes, int] = {}  # id -> offset

    def _header(self, kind: int, size: int) -> bytes:
        out = bytearray([(kind << 4) | (size & 0x0F)])
        size >>= 4
        while size:
            out[-1] |= 0x80
            out.append(size & 0x7F)
            size >>= 7
        return bytes(out)

    def _write(self, oid: bytes, raw: bytes) -> int:
        start = self.offset
        self.f.write(raw)
        self.offset += len(raw)
        self.index.append((oid, zlib.crc32(raw), start))
        self.seen[oid] = start
        return start

    def add(self, kind: int, kind_name: bytes, data: bytes, level: int = 1) -> tuple[bytes, int | None]:
        oid = _obj_id(kind_name, data)
        if oid in self.seen:
            return oid, None
        return oid, self._write(oid, self._header(kind, len(data)) + zlib.compress(data, level))

    def add_delta(self, oid: bytes, base_offset: int, delta: bytes) -> int:
        start = self.offset
        rel = start - base_offset
        enc = bytearray([rel & 0x7F])
        rel >>= 7
        while rel:
            rel -= 1
            enc.insert(0, 0x80 | (rel & 0x7F))
            rel >>= 7
        return self._write(oid, self._header(OFS_DELTA, len(delta)) + bytes(enc) + zlib.compress(delta, 1))

    def finish(self) -> str | None:
        """Write the trailer and the index, rename both into place; the pack's name, or None if empty."""
        count = len(self.index)
        self.f.seek(8)
        self.f.write(struct.pack(">I", count))
        self.f.close()
        if count == 0:
            self.tmp.unlink(missing_ok=True)
            return None
        h = hashlib.sha1()
        with open(self.tmp, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        pack_sum = h.digest()
        with open(self.tmp, "ab") as f:
            f.write(pack_sum)
            f.flush()
            from kyb_cli.core.canon import durability

            durability.fsync_file(f.fileno())
        entries = sorted(self.index)
        idx = bytearray(b"\377tOc" + struct.pack(">I", 2))
        fanout = [0] * 256
        for oid, _crc, _off in entries:
            fanout[oid[0]] += 1
        total = 0
        for i in range(256):
            total += fanout[i]
            idx += struct.pack(">I", total)
        for oid, _crc, _off in entries:
            idx += oid
        for _oid, crc, _off in entries:
            idx += struct.pack(">I", crc)
        large: list[int] = []
        for _oid, _crc, off in entries:
            if off < 0x80000000:
                idx += struct.pack(">I", off)
            else:
                idx += struct.pack(">I", 0x80000000 | len(large))
                large.append(off)
        for off in large:
            idx += struct.pack(">Q", off)
        idx += pack_sum
        idx += hashlib.sha1(bytes(idx)).digest()
        name = f"pack-{pack_sum.hex()}"
        tmp_idx = self.pack_dir / f"tmp_idx_kyb_{os.getpid()}"
        from kyb_cli.core.canon import durability

        durability.write_durably(tmp_idx, bytes(idx), 0o444)
        os.chmod(self.tmp, 0o444)
        os.replace(self.tmp, self.pack_dir / f"{name}.pack")
        os.replace(tmp_idx, self.pack_dir / f"{name}.idx")  # last: Git finds packs by their index
        durability.fsync_dir(self.pack_dir)
        return name

    def abort(self) -> None:
        try:
            self.f.close()
        except OSError:
            pass
        self.tmp.unlink(missing_ok=True)


def write_pack(repo, base, commits, sig) -> bytes:
    """Write `commits` (canon/batch.Commit) on `base` as one pack; the last commit's raw id."""
    pack_dir = Path(repo.path) / "objects" / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    root_entries: dict[str, tuple[bytes, bytes]] = {}  # name -> (mode, raw id), the root tree
    dirs: dict[str, _Dir] = {}
    base_tree = base.tree if base is not None else None
    if base_tree is not None:
        for e in base_tree:
            root_entries[e.name] = (b"%o" % e.filemode, e.id.raw)
    offset_min = sig.offset
    tz = b"%s%02d%02d" % (b"-" if offset_min < 0 else b"+", abs(offset_min) // 60, abs(offset_min) % 60)
    ident = b"%s <%s> %d %s" % (sig.name.encode("utf-8"), sig.email.encode("utf-8"), sig.time, tz)
    parent = base.id.raw if base is not None else None
    w = PackWriter(pack_dir)
    try:
        def tree_at(d: str) -> _Dir:
            tree = dirs.get(d)
            if tree is None:
                entries = []
                head, _, _rest = d.partition("/")
                if head in root_entries and root_entries[head][0] == TREE_MODE and base_tree is not None:
                    try:
                        sub = base_tree[d]
                    except KeyError:
                        sub = None
                    if sub is not None and sub.type_str == "tree":
                        entries = [(e.name, b"%o" % e.filemode, e.id.raw) for e in sub]
                tree = dirs[d] = _Dir(entries)
            return tree

        def write_tree(tree: _Dir, old_data: bytes, spots: list) -> bytes:
            oid = _obj_id(b"tree", tree.data)
            if not tree.names:  # emptied: its parent drops it, so it is not written (a delta yielding
                tree.last_offset, tree.depth = None, 0  # nothing is unreadable), and the next version is whole
            elif oid in w.seen:  # this version was written before (a file added, then removed again)
                tree.last_offset = w.seen[oid]
                tree.depth = tree.depths.get(oid, DEPTH)
            else:
                if len(spots) == 1 and tree.last_offset is not None and tree.depth < DEPTH:
                    pos, old_len, new = spots[0]
                    delta = (_varint(len(old_data)) + _varint(len(tree.data)) + _copy(0, pos)
                             + (_insert(new) if new else b"")
                             + _copy(pos + old_len, len(old_data) - pos - old_len))
                    tree.last_offset = w.add_delta(oid, tree.last_offset, delta)
                    tree.depth += 1
                else:
                    _, tree.last_offset = w.add(TREE, b"tree", tree.data)
                    tree.depth = 0
                tree.depths[oid] = tree.depth
            return oid

        def update(d: str, files: list[tuple[str, bytes | None, bytes]]) -> bytes | None:
            """Apply `files` (name, oid or None, mode) to directory `d`: its new tree id, None when empty."""
            tree = tree_at(d)
            old_data = tree.data
            spots = [s for s in (tree.set(name, oid, mode) for name, oid, mode in files) if s is not None]
            oid = write_tree(tree, old_data, spots)
            return oid if tree.names else None

        for c in commits:
            deep: dict[str, list[tuple[str, bytes | None, bytes]]] = {}  # "<dir>/<bucket>" -> files
            touched: dict[str, list[tuple[str, bytes | None, bytes]]] = {}  # "<dir>" -> entries
            for path, data in c.changes.items():
                oid = None
                if data is not None:
                    oid, _ = w.add(BLOB, b"blob", data, 6)
                folder, _, name = path.rpartition("/")
                (deep if "/" in folder else touched).setdefault(folder, []).append((name, oid, b"100644"))
            for bucket_path, files in deep.items():
                d, _, bucket = bucket_path.partition("/")
                touched.setdefault(d, []).append((bucket, update(bucket_path, files), TREE_MODE))
            for d, files in touched.items():
                oid = update(d, files)
                if oid is not None:
                    root_entries[d] = (TREE_MODE, oid)
                else:
                    root_entries.pop(d, None)
            root = b"".join(b"%s %s\0%s" % (mode, name.encode("utf-8"), oid) for name, (mode, oid) in sorted(
                root_entries.items(), key=lambda kv: kv[0] + ("/" if kv[1][0] == TREE_MODE else "")))
            root_id, _ = w.add(TREE, b"tree", root)
            body = b"tree %s\n" % root_id.hex().encode()
            if parent is not None:
                body += b"parent %s\n" % parent.hex().encode()
            body += b"author %s\ncommitter %s\n\n%s" % (ident, ident, c.message.encode("utf-8"))
            parent, _ = w.add(COMMIT, b"commit", body)
        w.finish()
    except BaseException:
        w.abort()
        raise
    return parent
