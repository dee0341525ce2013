"""A stand-in reading process for the tests of ``socialrag.knowledge.fulltext.apart``: it answers with the names
of the environment variables it was given, as a JSON object."""

from __future__ import annotations

import json
import os
import sys

if __name__ == "__main__":
    sys.stdin.buffer.read()
    sys.stdout.write(json.dumps({"names": sorted(os.environ)}))
