import sys; sys.path.insert(0,".scratch")
from explore import *
name = sys.argv[1]; same = len(sys.argv) > 2
for tools, voc, cases in sets()[(name, same)]:
    idx = SearchIndex(tools, vocabulary=vocabulary.for_collection(voc))
    for q, gold in cases:
        rows = idx.search(q, k=10).rows
        ids = [r.tool_id for r in rows]
        rank = next((i for i, t in enumerate(ids, 1) if t in gold), None)
        if rank != 1:
            print(f"[{rank}] {q!r} gold={sorted(gold)}")
            for r in rows[:3]:
                print("    ", r.tool_id, round(r.score,2), r.matched_terms, {k: round(v,2) for k,v in r.field_scores.items()})
            g = next((r for r in rows if r.tool_id in gold), None)
            if g: print("   G", g.tool_id, round(g.score,2), g.matched_terms, {k: round(v,2) for k,v in g.field_scores.items()})
