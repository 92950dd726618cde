"""Plans as values (spec 03 §1.4–§1.7): ops, the virtual apply, the diff, encodings."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest
from planners import document, register

from mbank.model import CreateFile, DeleteFile, Plan, ReplaceFile
from mbank.plan import (
    apply_virtually,
    as_lf,
    create_bytes,
    create_document,
    delete_document,
    document_text,
    encode_text,
    plan_data,
    plan_diff,
    replace_bytes,
    replace_document,
    sha256_hex,
    uses_crlf,
)
from mbank.snapshot import Bank


def test_ops_are_a_tagged_union_that_round_trips_through_json() -> None:
    plan = Plan(
        "bank_promote",
        (
            create_bytes("domain/n.md", b"# N\n"),
            replace_bytes("domain/README.md", b"new\n", sha256_hex(b"old\n")),
            DeleteFile(path="_inbox/n.md", before=sha256_hex(b"# N\n")),
        ),
    )
    encoded = msgspec.json.encode(plan)
    assert msgspec.json.decode(encoded, type=Plan) == plan
    kinds = [op["kind"] for op in msgspec.to_builtins(plan)["ops"]]
    assert kinds == ["create", "replace", "delete"]
    assert [op.kind for op in plan.ops] == kinds


def test_an_unknown_op_kind_is_rejected_naming_the_json_path() -> None:
    bad = b'{"tool":"t","ops":[{"kind":"rename","path":"a.md"}]}'
    with pytest.raises(msgspec.ValidationError, match=r"\$\.ops\[0\]"):
        msgspec.json.decode(bad, type=Plan)


def test_op_hashes_must_describe_the_content() -> None:
    with pytest.raises(ValueError, match="after is not the sha256"):
        CreateFile(path="a.md", content=b"x", after=sha256_hex(b"y"))
    with pytest.raises(ValueError, match="needs content and a pre-image"):
        ReplaceFile(path="a.md", content=b"x", after=sha256_hex(b"x"))
    with pytest.raises(ValueError, match="pre-image hash and nothing else"):
        DeleteFile(path="a.md", before="0" * 64, content=b"x")


def test_a_path_appears_at_most_once_per_plan() -> None:
    with pytest.raises(ValueError, match="appears twice"):
        Plan("t", (create_bytes("a.md", b"1"), create_bytes("a.md", b"2")))


def test_ops_are_frozen_values() -> None:
    op = create_bytes("a.md", b"x")
    with pytest.raises(AttributeError):
        op.path = "b.md"  # type: ignore[misc]
    assert op == create_bytes("a.md", b"x")
    assert hash(op) == hash(create_bytes("a.md", b"x"))


# --------------------------------------------------------------------------------------------
# §1.7 encoding and line endings
# --------------------------------------------------------------------------------------------


def test_a_crlf_file_stays_crlf_and_mixed_endings_come_out_uniform() -> None:
    pre = "---\r\ntitle: A\n---\r\nbody\r\n"
    assert uses_crlf(pre)
    assert encode_text("a\nb\r\nc\n", like=pre) == b"a\r\nb\r\nc\r\n"


def test_a_lf_file_and_a_new_file_are_written_with_lf() -> None:
    assert encode_text("a\r\nb\n", like="x\ny\r\n") == b"a\nb\n"
    assert encode_text("a\r\nb\n") == b"a\nb\n"


def test_a_bom_in_a_kept_head_is_kept_and_none_is_added() -> None:
    assert encode_text("\ufeff---\ntitle: A\n---\n") == b"\xef\xbb\xbf---\ntitle: A\n---\n"
    assert not encode_text("---\n").startswith(b"\xef\xbb\xbf")


def test_writes_work_on_text_with_crlf_read_as_lf(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"---\r\ntitle: A\r\n---\r\n# A\r\n")
    snapshot = Bank(tmp_path).refresh()
    assert document_text(snapshot, "a.md") == "---\ntitle: A\n---\n# A\n"
    op = replace_document(snapshot, "a.md", document_text(snapshot, "a.md") + "more\n")
    assert op.content == b"---\r\ntitle: A\r\n---\r\n# A\r\nmore\r\n"
    assert op.before == sha256_hex((tmp_path / "a.md").read_bytes())
    assert as_lf("a\r\nb") == "a\nb"


# --------------------------------------------------------------------------------------------
# §1.5 the virtual apply
# --------------------------------------------------------------------------------------------


def test_virtual_apply_reparses_touched_files_and_rebuilds_every_map(
    fixture_bank: Path, assert_unchanged: Any
) -> None:
    snapshot = Bank(fixture_bank).refresh()
    new = "domain/pricing.md"
    plan = Plan(
        "bank_create",
        (
            create_document(new, document("Pricing", "How jobs are priced.", ["rules.md"])),
            replace_document(
                snapshot,
                "domain/README.md",
                register(
                    document_text(snapshot, "domain/README.md"),
                    "domain/README.md",
                    new,
                    "Pricing",
                    "How jobs are priced.",
                ),
            ),
        ),
    )
    with assert_unchanged(fixture_bank):
        after = apply_virtually(snapshot, plan)
    assert new in after.docs and new not in snapshot.docs
    assert after.docs[new].registered_in == ("domain/README.md",)
    assert new in after.incoming["domain/rules.md"]
    assert new not in snapshot.incoming.get("domain/rules.md", ())
    assert list(after.docs) == sorted(after.docs)
    assert after.generation < 0


def test_virtual_apply_removes_deleted_documents_and_their_registrations(
    fixture_bank: Path,
) -> None:
    snapshot = Bank(fixture_bank).refresh()
    after = apply_virtually(snapshot, Plan("t", (delete_document(snapshot, "domain/rules.md"),)))
    assert "domain/rules.md" not in after.docs
    assert "domain/rules.md" not in after.incoming
    assert all("domain/rules.md" not in paths for key, paths in after.owners.items() if key), (
        after.owners
    )


def test_virtual_apply_rebuilds_the_contract_when_dna_is_touched(fixture_bank: Path) -> None:
    snapshot = Bank(fixture_bank).refresh()
    assert snapshot.contract.present
    dna = [path for path in snapshot.docs if path.startswith("dna/")]
    after = apply_virtually(
        snapshot, Plan("t", tuple(delete_document(snapshot, path) for path in dna))
    )
    assert not after.contract.present


def test_virtual_apply_ignores_paths_the_walk_would_not_index(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    snapshot = Bank(tmp_path).refresh()
    plan = Plan(
        "t",
        (
            create_bytes("notes.txt", b"x"),
            create_bytes(".hidden/x.md", b"# X\n"),
            create_bytes("node_modules/x.md", b"# X\n"),
        ),
    )
    assert list(apply_virtually(snapshot, plan).docs) == ["a.md"]


# --------------------------------------------------------------------------------------------
# §1.6 the diff
# --------------------------------------------------------------------------------------------


def _bank_with(tmp_path: Path, files: dict[str, bytes]) -> Bank:
    for path, content in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return Bank(tmp_path)


def test_diff_of_create_replace_and_delete_in_plan_order(tmp_path: Path, snapshot: Any) -> None:
    bank = _bank_with(
        tmp_path,
        {"index.md": b"# Index\n\n- [A](a.md)\n", "old.md": b"# Old\n\ngone\n"},
    )
    current = bank.refresh()
    plan = Plan(
        "t",
        (
            create_document("new.md", "# New\n\ntext\n"),
            replace_document(current, "index.md", "# Index\n\n- [A](a.md)\n- [New](new.md)\n"),
            delete_document(current, "old.md"),
        ),
    )
    diff = plan_diff(current, plan)
    assert diff.startswith("--- /dev/null\n+++ b/new.md\n")
    assert "--- a/index.md\n+++ b/index.md\n" in diff
    assert "--- a/old.md\n+++ /dev/null\n" in diff
    assert diff == snapshot


def test_diff_marks_a_side_without_final_newline(tmp_path: Path) -> None:
    bank = _bank_with(tmp_path, {"a.md": b"# A\nlast"})
    current = bank.refresh()
    diff = plan_diff(current, Plan("t", (replace_document(current, "a.md", "# A\nlast\n"),)))
    assert diff == (
        "--- a/a.md\n+++ b/a.md\n@@ -1,2 +1,2 @@\n # A\n-last\n"
        "\\ No newline at end of file\n+last\n"
    )


def test_diff_normalises_crlf_to_lf(tmp_path: Path) -> None:
    bank = _bank_with(tmp_path, {"a.md": b"# A\r\none\r\n"})
    current = bank.refresh()
    diff = plan_diff(current, Plan("t", (replace_document(current, "a.md", "# A\ntwo\n"),)))
    assert "\r" not in diff
    assert "-one\n+two\n" in diff


def test_diff_of_an_empty_plan_is_empty(tmp_path: Path) -> None:
    current = _bank_with(tmp_path, {"a.md": b"# A\n"}).refresh()
    assert plan_diff(current, Plan("t", ())) == ""


def test_diff_renders_non_text_as_one_binary_line(tmp_path: Path) -> None:
    current = _bank_with(tmp_path, {"bin.md": b"\xff\xfe\x00x", "t.md": b"# T\n"}).refresh()
    plan = Plan(
        "t",
        (
            delete_document(current, "bin.md"),
            create_bytes("new.md", b"\x00\x01"),
            replace_bytes("t.md", b"\xff", current.docs["t.md"].sha256),
        ),
    )
    assert plan_diff(current, plan) == (
        "Binary file bin.md deleted\nBinary file new.md created\nBinary file t.md changed\n"
    )


def test_diff_takes_pre_images_the_snapshot_does_not_hold_from_the_caller(tmp_path: Path) -> None:
    current = _bank_with(tmp_path, {"a.md": b"# A\n"}).refresh()
    plan = Plan("t", (replace_bytes("notes.txt", b"two\n", sha256_hex(b"one\n")),))
    assert plan_diff(current, plan, {"notes.txt": b"one\n"}).endswith("-one\n+two\n")
    with pytest.raises(ValueError, match="no pre-image"):
        plan_diff(current, plan)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"# A\none\ntwo\n", b"# A\none\n2\nthree"),
        (b"x", b"y\n"),
        (b"# A\r\n\r\nline\r\n", b"# A\r\n\r\nline\r\nmore\r\n"),
        (
            b"".join(b"line %d\n" % i for i in range(40)),
            b"".join(b"L %d\n" % i for i in range(0, 40, 3)),
        ),
    ],
)
def test_the_diff_applies_with_patch_to_give_the_post_state(
    tmp_path: Path, old: bytes, new: bytes
) -> None:
    bank_dir = tmp_path / "bank"
    current = _bank_with(bank_dir, {"a.md": old, "gone.md": old}).refresh()
    plan = Plan(
        "t",
        (
            replace_bytes("a.md", new, sha256_hex(old)),
            create_bytes("b.md", new),
            delete_document(current, "gone.md"),
        ),
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.md").write_bytes(old.replace(b"\r\n", b"\n"))
    (work / "gone.md").write_bytes(old.replace(b"\r\n", b"\n"))
    patch = tmp_path / "plan.diff"
    patch.write_text(plan_diff(current, plan), encoding="utf-8")
    subprocess.run(
        ["patch", "-p1", "-s", "-i", str(patch)], cwd=work, check=True, capture_output=True
    )
    assert (work / "a.md").read_bytes() == new.replace(b"\r\n", b"\n")
    assert (work / "b.md").read_bytes() == new.replace(b"\r\n", b"\n")
    assert not (work / "gone.md").exists()


def test_plan_data_shows_text_content_and_hashes(tmp_path: Path, snapshot: Any) -> None:
    current = _bank_with(tmp_path, {"index.md": b"# Index\n"}).refresh()
    plan = Plan(
        "bank_create",
        (
            create_document("a.md", "# A\n"),
            replace_document(current, "index.md", "# Index\n\n- [A](a.md)\n"),
            create_bytes("raw.md", b"\xff"),
        ),
    )
    data = plan_data(plan)
    assert data["ops"][2]["content"] == {"base64": "/w=="}
    assert data == snapshot
