import { readFileSync, readdirSync } from 'node:fs';
import { boostRanker, byHand, byModel, rankingQuality, trainRanker } from './search/training/train-ranker';
import type { RankerExample } from './search/training/ranker-features';
const dir = process.argv[2];
const manifest = JSON.parse(readFileSync('/work/corpus/manifest.json', 'utf8'));
const split = new Map<string, string>(manifest.packages.map((p: any) => [`corpus-${p.name}`, p.split]));
const sets = new Map<string, RankerExample[]>();
for (const f of readdirSync(dir)) sets.set(f.split('.')[0], readFileSync(`${dir}/${f}`, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)));
const role = (n: string) => (n.startsWith('set-') ? 'tuning' : split.get(n));
const of = (r: string) => [...sets].filter(([n]) => role(n) === r).flatMap(([, e]) => e);
const fmt = (q: ReturnType<typeof rankingQuality>) => `${q.recallAt1.toFixed(3)} ${q.recallAt5.toFixed(3)} ${q.mrr.toFixed(3)}`;
const l2 = Number(process.env.L2 ?? 0.01);
const train = of('train');
console.log('train', train.length, 'validation', of('validation').length);
const linear = trainRanker(train, { l2, perSourceCap: 40 });
const configs = (process.env.BOOST ?? '0').split(',').map(Number);
for (const trees of configs) {
  const model = trees ? boostRanker(train, linear, { trees, depth: Number(process.env.DEPTH ?? 3), rate: 0.1 }) : linear;
  console.log(`--- l2 ${l2} trees ${trees}`);
  for (const r of ['train', 'validation', 'tuning']) console.log(r.padEnd(12), 'hand', fmt(rankingQuality(of(r), byHand)), '| model', fmt(rankingQuality(of(r), byModel(model))));
  for (const [n, e] of sets) if (n.startsWith('set-')) console.log(n.padEnd(12), 'hand', fmt(rankingQuality(e, byHand)), '| model', fmt(rankingQuality(e, byModel(model))));
}
console.log(linear.weights.map((w, i) => `${linear.features[i]}=${w}`).join(' '));
