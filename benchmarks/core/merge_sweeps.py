#!/usr/bin/env python3
"""Merges several core_sweep_bench JSON files of one variant (DIR/NAME.*.json) into one: per
case, the median of each figure over the runs. Usage: merge_sweeps.py DIR NAME OUT.json"""
import json,glob,sys,statistics as st
d,name,out=sys.argv[1:4]
runs=[json.load(open(f)) for f in sorted(glob.glob(f"{d}/{name}.*.json"))]
per={}
order=[]
for r in runs:
    for c in r['cases']:
        k=(c['name'],c['temp'],c['threads'])
        if k not in per: order.append(k)
        per.setdefault(k,[]).append(c)
cases=[]
for k in order:
    cs=per[k]; m=dict(cs[0])
    for f,v in m.items():
        if isinstance(v,(int,float)) and not isinstance(v,bool) and f not in ('width','height','pitch','bytes'):
            m[f]=st.median([c[f] for c in cs])
    m['runs']=len(cs)
    cases.append(m)
ctx=dict(runs[0]['context']); ctx['runs']=len(runs); ctx['note']='per-case medians over runs of the sweep'
json.dump({'context':ctx,'cases':cases},open(out,'w'),indent=1)
