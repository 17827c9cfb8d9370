# Session 29: the offline check of rung 3's throughput model (register_blocked_wave_policy) against
# the probe's timings. Usage: python3 rung3_wave_model.py call1-rung3-tiles.csv
import csv,re,math,collections,sys,itertools
rows=list(csv.DictReader(open(sys.argv[1])))
SMS=132
pat=re.compile(r'register_blocked (\d+)x(\d+)x8, 2 stages, (\d+) block/SM,(.*?)split-K (\d+)(?: x (\d+))?')
def parse(prob,plan):
    m=pat.match(plan)
    if not m: return None
    M,N,K=map(int,prob.split('_')[0].split('x'))
    bm,bn,r,_,s,kps=m.groups(); bm,bn,r,s=int(bm),int(bn),int(r),int(s)
    kps=int(kps) if kps else K
    return dict(M=M,N=N,K=K,bm=bm,bn=bn,r=r,s=s,kps=kps,packed='packed' in plan)
by=collections.defaultdict(list)
for r in rows:
    us=float(r['us'])
    if us<=0: continue
    p=parse(r['problem'],r['plan'])
    by[r['problem']].append((us,float(r['cublas_us']),r['tile'],p,r['plan']))
def cost(p,eff,red_bw=2.5e6,red_launch=2.0,rate=1.8e5):
    tiles=-(-p['M']//p['bm'])*(-(-p['N']//p['bn']))
    blocks=tiles*p['s']
    per_sm=-(-blocks//SMS)
    t=per_sm*p['bm']*p['bn']*p['kps']/(rate*eff[(p['bm'],p['bn'])])
    if p['s']>1: t+=red_launch+2*p['s']*p['M']*p['N']*4/red_bw
    return t
def evaluate(eff,tiles_allowed,gain=1.0,verbose=False):
    g0=g1=0;n=0;worse=[];better=[]
    for prob,v in by.items():
        ch=[x for x in v if x[2]=='chosen'][0]
        if ch[3] is None or (ch[3]['bm'],ch[3]['bn'])!=(128,128): continue
        cands=[x for x in v if x[3] is not None and (x[3]['bm'],x[3]['bn']) in tiles_allowed and x[3]['packed']==ch[3]['packed']]
        own=cost(ch[3],eff)
        pick=min(cands,key=lambda x:cost(x[3],eff))
        if cost(pick[3],eff)>gain*own: pick=ch
        n+=1; g0+=math.log(ch[1]/ch[0]); g1+=math.log(ch[1]/pick[0])
        if pick[0]>ch[0]*1.05: worse.append((prob,ch[0],pick[0],pick[4][:70]))
        if pick[0]<ch[0]*0.95: better.append((prob,ch[0],pick[0],pick[4][:70]))
    if verbose:
        for w in worse: print('  WORSE',w)
        for b in better: print('  better',b)
    return n,math.exp(g0/n),math.exp(g1/n),len(worse),len(better)
T3=[(128,128),(64,128),(128,64)]
T5=T3+[(32,128),(128,32)]
best=None
for e2 in [0.75,0.8,0.85,0.9,0.95,1.0]:
  for e3 in [0.5,0.6,0.7,0.8,0.9]:
    for gain in [1.0,0.9,0.85]:
      for tl,name in [(T3,'T3'),(T5,'T5')]:
        eff={(128,128):1.0,(64,128):e2,(128,64):e2,(32,128):e3,(128,32):e3}
        r=evaluate(eff,tl,gain)
        if name=='T3' and e3!=0.5: continue
        print(name,e2,e3,gain,'n=%d chosen %.4f pick %.4f worse %d better %d'%r)
print('---')
eff={(128,128):1.0,(64,128):0.9,(128,64):0.9,(32,128):0.7,(128,32):0.7}
print(evaluate(eff,T3,0.85,verbose=True))
print('--- variant: keep 128x128 auto; alt tiles any split')
def evaluate2(eff,alts,gain,verbose=False,**kw):
    g0=g1=0;n=0;worse=[];better=[]
    for prob,v in by.items():
        ch=[x for x in v if x[2]=='chosen'][0]
        if ch[3] is None or (ch[3]['bm'],ch[3]['bn'])!=(128,128): continue
        cands=[x for x in v if x[3] is not None and (x[3]['bm'],x[3]['bn']) in alts and x[3]['packed']==ch[3]['packed']]
        own=cost(ch[3],eff,**kw)
        pick=min(cands,key=lambda x:cost(x[3],eff,**kw)) if cands else ch
        if cost(pick[3],eff,**kw)>gain*own: pick=ch
        n+=1; g0+=math.log(ch[1]/ch[0]); g1+=math.log(ch[1]/pick[0])
        if pick[0]>ch[0]*1.03: worse.append((prob,ch[0],pick[0],pick[4][:70]))
        if pick[0]<ch[0]*0.97: better.append((prob,ch[0],pick[0],pick[4][:70]))
    if verbose:
        for w in worse: print('  WORSE',w)
        for b in better: print('  better',b)
    return n,math.exp(g0/n),math.exp(g1/n),len(worse),len(better)
for e2 in [0.8,0.85,0.9,0.95]:
  for gain in [1.0,0.9,0.85,0.8]:
    for alts,name in [([(64,128),(128,64)],'A2'),([(64,128),(128,64),(32,128),(128,32)],'A4')]:
      for e3 in ([0.6,0.7,0.8] if name=='A4' else [0]):
        eff={(128,128):1.0,(64,128):e2,(128,64):e2,(32,128):e3,(128,32):e3}
        print(name,e2,e3,gain,'n=%d chosen %.4f pick %.4f worse %d better %d'%evaluate2(eff,alts,gain))
print('--- detail')
eff={(128,128):1.0,(64,128):0.9,(128,64):0.9}
print(evaluate2(eff,[(64,128),(128,64)],0.85,verbose=True))
print('--- threshold 2^31 flops')
def evaluate3(eff,alts,gain,minflops):
    res=[]
    for prob,v in by.items():
        ch=[x for x in v if x[2]=='chosen'][0]
        if ch[3] is None or (ch[3]['bm'],ch[3]['bn'])!=(128,128): continue
        p=ch[3]
        if 2*p['M']*p['N']*p['K']<minflops: continue
        cands=[x for x in v if x[3] is not None and (x[3]['bm'],x[3]['bn']) in alts and x[3]['packed']==ch[3]['packed']]
        own=cost(ch[3],eff)
        pick=min(cands,key=lambda x:cost(x[3],eff)) if cands else ch
        ratio=cost(pick[3],eff)/own
        if ratio>gain: pick=ch
        res.append((prob,ch[0],pick[0],'%.2f'%ratio,pick[4][:60]))
    return res
for r in evaluate3({(128,128):1.0,(64,128):0.9,(128,64):0.9},[(64,128),(128,64)],0.85,2**31): print(r)
