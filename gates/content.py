"""Content from an inline argument or from a file inside the project (spec 03 §2.5).

Pure. Rules 1–4 look at the arguments alone; rules 5–11 need the disk, so the write engine
reads the file when it builds the intent (`mbank.writes.read_content_file`) and keeps the
outcome — the text, or the refusal — in `intent.files`. `content_from` reports that refusal
here, at the place the tool's order gives to this gate, so an earlier gate (a blank title, a
governance refusal) still wins over a bad file.
"""

from __future__ import annotations

from collections.abc import Mapping

from mbank.model import FileRead, RefusalError
from mbank.paths import refuse


def content_from(
    inline: str | None, given: str | None, files: Mapping[str, FileRead], what: str
) -> str | None:
    """The content an inline argument / file argument pair gives, or the §2.5 refusal in order.

    `what` is `body` or `content` (the messages name `<what>` and `<what>File`; the file's
    outcome is `files["<what>File"]`). Returns the inline value (None when absent; the tool
    decides what blank means) when no file is given, else the file's text. "Given" means
    present and not null, the engine's own reading.
    """
    file_key = f"{what}File"
    if inline is not None and given is not None:
        raise refuse("file-both", f"Pass either {what} or {what}File, not both.")
    if given is None:
        return inline
    file_name = given
    if not file_name.strip():
        raise refuse(
            "file-empty",
            f"{what}File is empty. Pass a path, or use {what} for content you have in hand.",
        )
    if "\x00" in file_name:
        raise refuse("file-nul", f'{what}File "{file_name}" contains a NUL character.')
    read = files.get(file_key)
    if read is None:
        raise ValueError(f"the engine did not read {file_key}; build the intent with execute()")
    if read.refusal is not None:
        raise RefusalError(read.refusal)
    return read.text or ""
