"""Exploration harness: lexical SearchIndex on the tools `qlab run` builds, every set. Not committed."""
import sys, json, time, os, tempfile, pickle
from pathlib import Path
sys.path.insert(0, "bench")
import bench_search as B
from qlab.engine.index import SearchIndex
from qlab.engine import bm25f, vocabulary
from qlab.project import load_project
from qlab.collection.builder import build_collection
from dataclasses import replace

NAMES = ("tune","holdout","spotify","tmdb","metatool","all")
CACHE = Path(".scratch/sets.pickle")
_SETS = {}
def sets():
    if not _SETS:
        if CACHE.exists():
            _SETS.update(pickle.loads(CACHE.read_bytes()))
        else:
            raw = {"tune": B.devset("tune"), "holdout": B.devset("holdout"), "spotify": [B.restbench("spotify")],
                   "tmdb": [B.restbench("tmdb")], "metatool": [B.metatool()], "all": [B.all_tools()]}
            for same in (False, True):
                for name, corpora in raw.items():
                    lst = []
                    for c in corpora:
                        with tempfile.TemporaryDirectory() as tmp:
                            cfg = B.write_project(c, Path(tmp), engine="builtin", same_text=same)
                            project = load_project(cfg)
                            col = build_collection(project.config, use_cache=False).collection
                        lst.append((col.tools, col.vocabulary, c.cases))
                    _SETS[(name, same)] = lst
            CACHE.write_bytes(pickle.dumps(_SETS))
    return _SETS

def run(make_index, names=NAMES, same=False):
    out = {}
    for name in names:
        tot = [0,0,0.0,0]
        for tools, voc, cases in sets()[(name, same)]:
            idx = make_index(tools, vocabulary.for_collection(voc))
            ranked = [[r.tool_id for r in idx.search(q, k=10).rows] for q,_ in cases]
            q = B.quality(ranked, cases)
            tot = [a+b for a,b in zip(tot,q)]
        out[name] = (int(tot[0]), int(tot[1]), tot[2]/tot[3], int(tot[3]))
    return out

def fmt(out):
    return "  ".join(f"{k}:{v[0]}/{v[1]}/{v[2]:.3f}" for k,v in out.items())
