import sys; sys.path.insert(0,".scratch")
from explore import *
import qlab.engine.index as I
D = bm25f.DEFAULT_SETTINGS
names = sys.argv[1].split(",")
same = "same" in sys.argv[3:]
I.PHRASE_IDF[0] = "idf" in sys.argv[3:]; I.NO_VERB[0] = "noverb" in sys.argv[3:]; bm25f.ORDERED[0] = "ordered" in sys.argv[3:]
def mk(fields=None, **kw):
    f = dict(D.fields)
    for name, (w, b) in (fields or {}).items():
        f[name] = bm25f.FieldSpec(w if w is not None else f[name].weight, b if b is not None else f[name].b)
    st = replace(D, fields=f, **{"phrase_fields": ('id','summary','path','description'), **kw})
    return lambda tools, voc: SearchIndex(tools, settings=st, vocabulary=voc)
for kw in eval(sys.argv[2]):
    t = time.time()
    print(kw, fmt(run(mk(**kw), names=names, same=same)), f"{time.time()-t:.1f}s", flush=True)
