import sys; sys.path.insert(0,".scratch")
from explore import *
D = bm25f.DEFAULT_SETTINGS
names = sys.argv[1].split(",")
same = "same" in sys.argv[2:]
for spec in sys.argv[3:] if len(sys.argv) > 3 else []:
    pass
def mk(**kw):
    st = replace(D, **kw)
    return lambda tools, voc: SearchIndex(tools, settings=st, vocabulary=voc)
grid = eval(sys.argv[2])
for kw in grid:
    t = time.time()
    print(kw, fmt(run(mk(**kw), names=names, same=same)), f"{time.time()-t:.1f}s", flush=True)
