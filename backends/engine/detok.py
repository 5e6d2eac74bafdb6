"""Token ids -> text deltas, one token at a time, with stop sequences.

Incremental decoding keeps a small window of already-emitted tokens as context (the TGI/vLLM
prefix/read offsets): SentencePiece tokenizers drop a leading space when a sequence is decoded on
its own, and byte-level BPE can split a UTF-8 character across tokens, so a delta is emitted only
once it decodes to complete characters.
"""

from __future__ import annotations


class IncrementalDetokenizer:
    def __init__(self, tokenizer, prompt_ids: list[int], context: int = 5) -> None:
        self.tokenizer = tokenizer
        self.tokens = list(prompt_ids[-context:])
        self.prefix_offset = 0
        self.read_offset = len(self.tokens)

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def push(self, token_id: int) -> str:
        self.tokens.append(token_id)
        prefix = self._decode(self.tokens[self.prefix_offset : self.read_offset])
        full = self._decode(self.tokens[self.prefix_offset :])
        if len(full) > len(prefix) and not full.endswith("\ufffd"):
            self.prefix_offset = self.read_offset
            self.read_offset = len(self.tokens)
            return full[len(prefix) :]
        return ""


class StopMatcher:
    """Holds back text that could be the start of a stop sequence; cuts at the first full match."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self.stops = tuple(s for s in stops if s)
        self.longest = max((len(s) for s in self.stops), default=0)
        self.text = ""
        self.emitted = 0

    def push(self, delta: str) -> tuple[str, bool]:
        """Returns (text safe to emit now, whether a stop sequence ended generation)."""
        if not self.stops:
            return delta, False
        search_from = max(0, self.emitted - self.longest + 1)
        self.text += delta
        hits = [i for i in (self.text.find(s, search_from) for s in self.stops) if i >= 0]
        if hits:
            cut = min(hits)
            out = self.text[self.emitted : cut]
            self.emitted = cut
            self.text = self.text[:cut]
            return out, True
        safe = len(self.text) - self._pending_prefix()
        out = self.text[self.emitted : safe]
        self.emitted = max(self.emitted, safe)
        return out, False

    def _pending_prefix(self) -> int:
        """Length of the longest tail of the text that is a proper prefix of some stop sequence."""
        for n in range(min(self.longest - 1, len(self.text)), 0, -1):
            tail = self.text[-n:]
            if any(s.startswith(tail) for s in self.stops):
                return n
        return 0

    def flush(self) -> str:
        out = self.text[self.emitted :]
        self.emitted = len(self.text)
        return out
