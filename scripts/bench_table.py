#!/usr/bin/env python3
"""The Markdown table of scripts/bench.sh, from its raw figures.

usage: bench_table.py RESULTS [--servers "peer plover plover_pg limit own own_pg"] [--workloads "..."]

RESULTS has one line per measured run, as bench.sh writes it (target/bench/last-results.txt):
    round server workload rps p50_ms p99_ms non2xx sock_err requests [cpu% rss_MiB pss_MiB]

Per workload: req/s and p99 of each server, medians over the rounds; the ratios the
performance issue asks for (Plover / ceiling req/s, Plover p99 / ceiling p99, Plover / peer
req/s, and the same for Plover on PostgreSQL), each the median of the per-round ratios (the
runs of one round and one workload are minutes apart, the rounds are not), with the range
over the rounds when there is more than one; and the targets Plover misses, on SQLite and on
PostgreSQL. Below the table: errors, peak RSS/PSS and CPU per server.

The ceiling of a row (CEILING): limit (../shared/bench-limit) for Plover's SQLite reads, own
(benches/ceiling on SQLite) for its SQLite create_message, own_pg (benches/ceiling on
PostgreSQL) for every Plover PostgreSQL row.
"""
import argparse
import statistics
import sys
from collections import defaultdict

LABEL = {'peer': 'peer', 'plover': 'Plover', 'plover_pg': 'Plover PG', 'limit': 'ceiling',
         'own': 'own ceiling', 'own_pg': 'own ceiling PG'}

# Targets of the performance issue.
T_CEIL_RPS = 0.90      # SQLite reads: req/s at least this share of the ceiling's (limit)
T_CEIL_P99 = 1.2       # SQLite reads: p99 at most this multiple of the ceiling's
T_WRITE_RPS = 0.90     # SQLite create_message: req/s at least this share of the write ceiling's (own)
T_PG_RPS = 0.85        # PostgreSQL, every workload: req/s at least this share of own_pg's
T_PEER_READ = 20.0     # SQLite, every read workload: at least this multiple of the peer
T_PEER_WRITE = 50.0    # SQLite create_message: at least this multiple of the peer
T_RSS_MIB = 48.0       # peak RSS over the whole set
WRITES = {'create_message'}


def ceiling_of(server, wl):
    """the server whose figures are the ceiling of `server` (plover or plover_pg) on `wl`"""
    if server == 'plover_pg':
        return 'own_pg'
    return 'own' if wl in WRITES else 'limit'


def load(path):
    """(runs, order, empty): runs[(server, workload)][round] = fields; order = servers and
    workloads as they first appear; empty = the runs in which no request completed (a slow
    write path can spend a short measured run on the warm-up's queue): their req/s and
    latencies are not counted, their memory and CPU are"""
    runs = defaultdict(dict)  # (server, workload) -> round -> fields
    order = []
    empty = []
    for line in open(path):
        f = line.split()
        if len(f) < 9:
            continue
        rnd, server, wl = int(f[0]), f[1], f[2]
        v = [float(x) for x in f[3:]]
        for x in (server, wl):
            if x not in order:
                order.append(x)
        if v[5] == 0:
            empty.append((server, wl, rnd))
        runs[(server, wl)][rnd] = {
            'rps': v[0], 'p50': v[1], 'p99': v[2], 'non2xx': v[3], 'sock': v[4], 'reqs': v[5],
            'cpu': v[6] if len(v) > 6 else None,
            'rss': v[7] if len(v) > 7 else None,
            'pss': v[8] if len(v) > 8 else None,
        }
    return runs, order, empty


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_rps(x):
    if x is None:
        return '-'
    return '{:,.0f}'.format(x) if x >= 100 else '{:.1f}'.format(x)


def fmt_ms(x):
    if x is None:
        return '-'
    return '{:.2f}'.format(x) if x < 10 else '{:.1f}'.format(x) if x < 1000 else '{:,.0f}'.format(x)


def fmt_ratio(x):
    if x is None:
        return '-'
    return '{:.2f}'.format(x) if x < 10 else '{:.1f}'.format(x) if x < 1000 else '{:,.0f}'.format(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('results')
    ap.add_argument('--servers', help='servers, in column order (default: as in RESULTS)')
    ap.add_argument('--workloads', help='workloads, in row order (default: as in RESULTS)')
    a = ap.parse_args()
    runs, seen, empty = load(a.results)
    servers = a.servers.split() if a.servers else [x for x in LABEL if any(k[0] == x for k in runs)]
    workloads = a.workloads.split() if a.workloads else [x for x in seen if x not in LABEL]
    rounds = sorted({r for v in runs.values() for r in v})
    multi = len(rounds) > 1

    def counted(server, wl):
        """round -> fields of the runs of server on wl in which requests completed"""
        return {k: r for k, r in runs.get((server, wl), {}).items() if r['reqs'] > 0}

    def stat(server, wl, key):
        rs = runs.get((server, wl), {}) if key == 'cpu' else counted(server, wl)
        return med([r[key] for r in rs.values()])

    def paired(num, den, wl, key):
        """median and range of the per-round ratios num/den (None when no round has both)"""
        a, b = counted(num, wl), counted(den, wl)
        xs = [a[r][key] / b[r][key] for r in rounds if r in a and r in b and b[r][key] > 0]
        if not xs:
            return None, None, None
        return statistics.median(xs), min(xs), max(xs)

    def cell(t):
        m, lo, hi = t
        if m is None:
            return '-'
        if multi and lo != hi:
            return '{} ({}-{})'.format(fmt_ratio(m), fmt_ratio(lo), fmt_ratio(hi))
        return fmt_ratio(m)

    has = set(servers)
    head = ['workload']
    for s in servers:
        head += ['{} req/s'.format(LABEL[s]), 'p99 ms']
    sqlite_ceiling = 'plover' in has and bool(has & {'limit', 'own'})
    pg_ceiling = {'plover_pg', 'own_pg'} <= has
    if sqlite_ceiling:
        head += ['Plover / ceiling', 'p99 / ceiling\'s']
    if {'plover', 'peer'} <= has:
        head += ['Plover / peer']
    if pg_ceiling:
        head += ['PG / ceiling', 'PG p99 / ceiling\'s']
    if {'plover_pg', 'peer'} <= has:
        head += ['PG / peer']
    if 'plover' in has and has & {'limit', 'own', 'peer'}:
        head += ['Plover misses']
    if pg_ceiling:
        head += ['PG misses']
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))

    for wl in workloads:
        row = [wl]
        for s in servers:
            row += [fmt_rps(stat(s, wl, 'rps')), fmt_ms(stat(s, wl, 'p99'))]
        misses, checked = [], False
        if sqlite_ceiling:
            ceil = ceiling_of('plover', wl)
            r_rps, r_p99 = paired('plover', ceil, wl, 'rps'), paired('plover', ceil, wl, 'p99')
            row += [cell(r_rps), cell(r_p99)]
            if r_rps[0] is not None:
                checked = True
                if r_rps[0] < (T_WRITE_RPS if wl in WRITES else T_CEIL_RPS):
                    misses.append('req/s')
                if wl not in WRITES and r_p99[0] is not None and r_p99[0] > T_CEIL_P99:
                    misses.append('p99')
        if {'plover', 'peer'} <= has:
            r_peer = paired('plover', 'peer', wl, 'rps')
            row += [cell(r_peer)]
            if r_peer[0] is not None and wl != 'plain':
                checked = True
                if r_peer[0] < (T_PEER_WRITE if wl in WRITES else T_PEER_READ):
                    misses.append('peer')
        pg_rps = (None, None, None)
        if pg_ceiling:
            pg_rps = paired('plover_pg', 'own_pg', wl, 'rps')
            row += [cell(pg_rps), cell(paired('plover_pg', 'own_pg', wl, 'p99'))]
        if {'plover_pg', 'peer'} <= has:
            row += [cell(paired('plover_pg', 'peer', wl, 'rps'))]
        if 'plover' in has and has & {'limit', 'own', 'peer'}:
            row += [', '.join(misses) if misses else ('none' if checked else '-')]
        if pg_ceiling:
            row += ['-' if pg_rps[0] is None else 'req/s' if pg_rps[0] < T_PG_RPS else 'none']
        print('| ' + ' | '.join(row) + ' |')

    print()
    print('Medians over {} round{}; ratios: median of the per-round ratios{}. '
          'p99 in ms.'.format(len(rounds), '' if len(rounds) == 1 else 's',
                              ' (range over the rounds)' if multi else ''))
    if sqlite_ceiling or pg_ceiling:
        print('Ceiling of a row: {} (../shared/bench-limit) for Plover\'s SQLite reads, {} '
              '(benches/ceiling on SQLite) for its create_message, {} (benches/ceiling on '
              'PostgreSQL) for every Plover PG row.'.format(LABEL['limit'], LABEL['own'], LABEL['own_pg']))
    if 'plover' in has and has & {'limit', 'own', 'peer'}:
        print('"Plover misses" lists the targets of the performance issue that Plover on SQLite '
              'does not meet here: req/s (reads under {:.2f}x the ceiling, create_message under '
              '{:.2f}x the write ceiling), p99 (reads over {}x the ceiling\'s), peer (under '
              '{:.0f}x the peer on reads, {:.0f}x on create_message); "-": nothing to compare '
              'with.'.format(T_CEIL_RPS, T_WRITE_RPS, T_CEIL_P99, T_PEER_READ, T_PEER_WRITE))
    if pg_ceiling:
        print('"PG misses": req/s when Plover on PostgreSQL is under {:.2f}x the PostgreSQL '
              'ceiling; "-": nothing to compare with.'.format(T_PG_RPS))
    for s in ('plover', 'plover_pg'):
        gaps = [w for w in workloads if s in has and ceiling_of(s, w) in has
                and stat(s, w, 'rps') is not None and stat(ceiling_of(s, w), w, 'rps') is None]
        if gaps:
            print('No ceiling figures for {} on {} (the ceiling was not asked to run them, has no '
                  'such route, or its run failed).'.format(
                      LABEL[s], ', '.join('{} ({})'.format(w, LABEL[ceiling_of(s, w)]) for w in gaps)))
    if empty:
        print('No request completed in the measured run of: {} (not counted; with a slow '
              'password hash a short run can end before the warm-up\'s queued writes are '
              'done).'.format(', '.join('{} {} (round {})'.format(LABEL.get(s, s), w, r)
                                        for s, w, r in empty)))

    print()
    errs = []
    for s in servers:
        for wl in workloads:
            rs = runs.get((s, wl), {}).values()
            ne, se = sum(r['non2xx'] for r in rs), sum(r['sock'] for r in rs)
            if ne or se:
                errs.append('{} {}: {:.0f} non-2xx, {:.0f} socket errors'.format(LABEL[s], wl, ne, se))
    print('Errors (summed over rounds): ' + ('; '.join(errs) if errs else 'none') + '.')
    print()
    print('Per server, peak of the process tree over every measured run (MiB), and median CPU % '
          '(100 = one core) per workload:')
    for s in servers:
        vals = [r for (srv, _), v in runs.items() if srv == s for r in v.values()]
        rss = max((r['rss'] for r in vals if r['rss'] is not None), default=None)
        pss = max((r['pss'] for r in vals if r['pss'] is not None), default=None)
        mem = '-' if rss is None else '{:.1f} RSS / {:.1f} PSS'.format(rss, pss)
        if s == 'plover' and rss is not None:
            mem += ' (target under {:.0f} MiB RSS: {})'.format(T_RSS_MIB, 'met' if rss < T_RSS_MIB else 'missed')
        cpu = ', '.join('{} {:.0f}'.format(wl, stat(s, wl, 'cpu')) for wl in workloads
                        if stat(s, wl, 'cpu') is not None)
        print('- {}: {}; CPU {}'.format(LABEL[s], mem, cpu or '-'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
