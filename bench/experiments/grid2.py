import sys; sys.path.insert(0,".scratch")
from explore import *
D = bm25f.DEFAULT_SETTINGS
names = sys.argv[1].split(",")
same = "same" in sys.argv[3:]
P = dict(phrase_weight=0.3, phrase_fields=('id','summary','path','description'))
def mk(base, fields=None, **kw):
    f = dict(D.fields)
    for name, (w, b) in (fields or {}).items():
        f[name] = bm25f.FieldSpec(w if w is not None else f[name].weight, b if b is not None else f[name].b)
    st = replace(D, fields=f, **{**(P if base else {}), **kw})
    return lambda tools, voc: SearchIndex(tools, settings=st, vocabulary=voc)
grid = eval(sys.argv[2])
for base, kw in grid:
    t = time.time()
    print(base, kw, fmt(run(mk(base, **kw), names=names, same=same)), f"{time.time()-t:.1f}s", flush=True)
