"""`switchyard classify "text"`: print the classifier's decision for a prompt.

Embeds the text with the gateway's encoder, then runs the ONNX head, exactly as a request would be.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def _classify(args: argparse.Namespace) -> int:
    from classifiers.embed import request_encoder
    from classifiers.runtime import MODEL_PATH, PromptClassifier

    texts = args.text or [line.rstrip("\n") for line in sys.stdin if line.strip()]
    if not texts:
        print("nothing to classify: give TEXT or pipe lines on stdin", file=sys.stderr)
        return 2
    encode, encoder_name = request_encoder()
    clf = PromptClassifier(args.model or MODEL_PATH)
    for text in texts:
        t0 = time.perf_counter()
        vector = encode([text])[0]
        t1 = time.perf_counter()
        c = clf.classify(vector)
        t2 = time.perf_counter()
        if args.json:
            print(json.dumps({"text": text, "label": c.label, "confidence": round(c.confidence, 4),
                              "probs": {k: round(v, 4) for k, v in c.probs.items()},
                              "embed_ms": round((t1 - t0) * 1e3, 2), "classify_ms": round((t2 - t1) * 1e3, 3)},
                             ensure_ascii=False))
        else:
            probs = "  ".join(f"{k} {v:.3f}" for k, v in sorted(c.probs.items(), key=lambda kv: -kv[1]))
            print(f"{c.label}  confidence {c.confidence:.3f}   [{probs}]   "
                  f"embed {(t1 - t0) * 1e3:.1f} ms ({encoder_name}), classify {(t2 - t1) * 1e3:.2f} ms")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("classify", help="print the prompt classifier's decision for TEXT")
    p.add_argument("text", nargs="*", help="prompts to classify (one argument each); stdin lines when none")
    p.add_argument("--json", action="store_true", help="one JSON object per prompt")
    p.add_argument("--model", help="ONNX file (default: the bundled classifiers/model/prompt_classifier.onnx)")
    p.set_defaults(func=_classify)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="switchyard")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
