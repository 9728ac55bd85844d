import sys; sys.path.insert(0,".scratch")
from explore import *
import qlab.engine.index as I
D = bm25f.DEFAULT_SETTINGS
names = sys.argv[1].split(",")
same = "same" in sys.argv[3:]
for vw, kw in eval(sys.argv[2]):
    I.VERB_W[0] = vw
    st = replace(D, **kw)
    t = time.time()
    print(vw, kw, fmt(run(lambda tools, voc: SearchIndex(tools, settings=st, vocabulary=voc), names=names, same=same)), f"{time.time()-t:.1f}s", flush=True)
