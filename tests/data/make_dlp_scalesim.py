#!/usr/bin/env python3
"""Makes tests/data/dlp_scalesim.csv: SCALE-Sim's own reports for the layers test_dlp.lua checks
lumen.dlp against, number for number.

SCALE-Sim is not a Debian package; it is only needed to regenerate this fixture:
    python3 -m venv /tmp/ssenv && /tmp/ssenv/bin/pip install scalesim==3.0.0 'numpy<2'
    /tmp/ssenv/bin/python tests/data/make_dlp_scalesim.py [--quick]
(scalesim 3.0.0 fails under numpy 2's stricter scalar conversion, hence numpy<2.) Each case is run
as SCALE-Sim runs a topology: one layer, its configuration written as a .cfg file with the v3
additions off (no custom layout, no sparsity, no Ramulator), and the three CSV reports read back.
The columns are the case, its configuration and layer, then COMPUTE_REPORT's 6 numbers,
BANDWIDTH_REPORT's 6 and DETAILED_ACCESS_REPORT's 18, exactly as SCALE-Sim printed them.
A case SCALE-Sim itself cannot run (it raises) is left out and said on stderr.
"""
import os
import random
import sys
import tempfile
import time

from scalesim.scale_sim import scalesim

CFG = """[general]
run_name = {name}

[architecture_presets]
ArrayHeight:    {rows}
ArrayWidth:     {cols}
IfmapSramSzkB:   {ifkb}
FilterSramSzkB:  {fkb}
OfmapSramSzkB:   {okb}
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Bandwidth : {bw}
Dataflow : {df}
MemoryBanks:   1
ReadRequestBuffer: 512
WriteRequestBuffer: 512

[layout]
IfmapCustomLayout: False
FilterCustomLayout: False
IfmapSRAMBankBandwidth: {bw}
IfmapSRAMBankNum: 1
IfmapSRAMBankPort: 2
FilterSRAMBankBandwidth: {bw}
FilterSRAMBankNum: 1
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport : false
SparseRep : ellpack_block
OptimizedMapping : false
BlockSize : 8
RandomNumberGeneratorSeed : 40

[run_presets]
InterfaceBandwidth: {mode}
UseRamulatorTrace: False
"""

ALEXNET = [  # SCALE-Sim's topologies/conv_nets/alexnet.csv
    ('alexnet_conv1', 224, 224, 11, 11, 3, 96, 4),
    ('alexnet_conv2', 27, 27, 5, 5, 96, 256, 1),
    ('alexnet_conv3', 13, 13, 3, 3, 256, 384, 1),
    ('alexnet_conv4', 13, 13, 3, 3, 384, 384, 1),
    ('alexnet_conv5', 13, 13, 3, 3, 384, 256, 1),
]


def cases(quick):
    out = []
    # SCALE-Sim's published test layers: test/general (a GEMM, USER bandwidth 10, each dataflow)
    # and test/golden_trace (AlexNet's first layer, CALC)
    for df in ('os', 'ws', 'is'):
        out.append(('published_gemm_user_' + df, 32, 32, df, 'USER', 64, 64, 64, 10,
                    256, 256, 1, 256, 1, 128, 1))
    for df in ('ws', 'os', 'is'):
        out.append(('published_alexnet_part_calc_' + df, 32, 32, df, 'CALC', 64, 64, 64, 10,
                    224, 224, 11, 11, 3, 96, 4))
    if not quick:
        for name, h, w, fh, fw, c, n, s in ALEXNET[1:]:
            for df in ('os', 'ws', 'is'):
                out.append((name + '_calc_' + df, 32, 32, df, 'CALC', 64, 64, 64, 10, h, w, fh, fw, c, n, s))
        for name, h, w, fh, fw, c, n, s in ALEXNET[2:3]:
            for df in ('os', 'ws', 'is'):
                out.append((name + '_user_' + df, 32, 32, df, 'USER', 64, 64, 64, 10, h, w, fh, fw, c, n, s))
    rng = random.Random(36)
    for i in range(48):
        rows, cols = rng.randint(1, 12), rng.randint(1, 12)
        df = rng.choice(['os', 'ws', 'is'])
        mode = rng.choice(['USER', 'USER', 'CALC'])
        ifkb, fkb, okb = rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6)
        bw = rng.randint(1, 16)
        if rng.random() < 0.35:  # a GEMM, as SCALE-Sim reads an M, N, K topology
            m, n, k = rng.randint(1, 90), rng.randint(1, 40), rng.randint(1, 90)
            layer = (m, k, 1, k, 1, n, 1)
        else:
            fh, fw = rng.randint(1, 5), rng.randint(1, 5)
            h, w = rng.randint(fh, fh + 14), rng.randint(fw, fw + 14)
            layer = (h, w, fh, fw, rng.randint(1, 8), rng.randint(1, 24), rng.randint(1, 3))
        out.append(('random_%02d' % i, rows, cols, df, mode, ifkb, fkb, okb, bw) + layer)
    return out


def run(case, tmp):
    name, rows, cols, df, mode, ifkb, fkb, okb, bw, h, w, fh, fw, c, n, s = case
    cfg = os.path.join(tmp, name + '.cfg')
    with open(cfg, 'w') as f:
        f.write(CFG.format(name=name, rows=rows, cols=cols, df=df, mode=mode, ifkb=ifkb, fkb=fkb,
                           okb=okb, bw=bw))
    topo = os.path.join(tmp, name + '.csv')
    with open(topo, 'w') as f:
        f.write('Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, '
                'Num Filter, Strides,\n')
        f.write('%s, %d, %d, %d, %d, %d, %d, %d,\n' % (name, h, w, fh, fw, c, n, s))
    layout = os.path.join(tmp, 'layout.csv')
    with open(layout, 'w') as f:
        f.write('Layer name\n')
    sim = scalesim(save_disk_space=True, verbose=False, config=cfg, topology=topo, layout=layout)
    sim.run_scale(top_path=tmp)
    vals = []
    for rep in ('COMPUTE_REPORT', 'BANDWIDTH_REPORT', 'DETAILED_ACCESS_REPORT'):
        with open(os.path.join(tmp, name, rep + '.csv')) as f:
            line = f.read().strip().split('\n')[1]
        vals += [x.strip() for x in line.split(',')[1:] if x.strip()]
    assert len(vals) == 30, vals
    return vals


def main():
    quick = '--quick' in sys.argv
    here = os.path.dirname(os.path.abspath(__file__))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases(quick):
            t = time.time()
            try:
                vals = run(case, tmp)
            except Exception as e:  # SCALE-Sim's own failure: the case is not kept
                print('skipped %s: SCALE-Sim raised %r' % (case[0], e), file=sys.stderr)
                continue
            print('%s: %.1f s' % (case[0], time.time() - t), file=sys.stderr)
            rows.append(','.join(str(x) for x in case) + ',' + ','.join(vals))
    with open(os.path.join(here, 'dlp_scalesim.csv'), 'w') as f:
        f.write('# SCALE-Sim 3.0.0 (PyPI) reports, made by tests/data/make_dlp_scalesim.py\n')
        f.write('# case,rows,cols,dataflow,mode,ifmap_kb,filter_kb,ofmap_kb,bandwidth,ifmap_h,'
                'ifmap_w,filter_h,filter_w,channels,filters,stride,overall_cycles,total_cycles,'
                'stall_cycles,overall_util,mapping_efficiency,compute_util,avg_ifmap_sram_bw,'
                'avg_filter_sram_bw,avg_ofmap_sram_bw,avg_ifmap_dram_bw,avg_filter_dram_bw,'
                'avg_ofmap_dram_bw,ifmap_sram_start,ifmap_sram_stop,ifmap_sram_reads,'
                'filter_sram_start,filter_sram_stop,filter_sram_reads,ofmap_sram_start,'
                'ofmap_sram_stop,ofmap_sram_writes,ifmap_dram_start,ifmap_dram_stop,'
                'ifmap_dram_reads,filter_dram_start,filter_dram_stop,filter_dram_reads,'
                'ofmap_dram_start,ofmap_dram_stop,ofmap_dram_writes\n')
        for r in rows:
            f.write(r + '\n')


if __name__ == '__main__':
    main()
