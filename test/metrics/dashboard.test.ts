import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';
import { registry } from '../../src/metrics/registry';

type Panel = { title: string; type: string; targets?: Array<{ expr: string }> };

// The dashboard and the operations guide are rendered nowhere: these checks keep them true to the registry.
describe('docs/grafana-dashboard.json and docs/operations.md', () => {
  const registered = new Set(registry.getMetricsAsArray().map((metric) => metric.name));
  const dashboard = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'docs', 'grafana-dashboard.json'), 'utf8')) as {
    panels: Panel[];
    __inputs: Array<{ name: string }>;
  };
  const guide = readFileSync(path.join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');
  const metricNames = (text: string) =>
    [...text.matchAll(/\b((?:duo|nodejs|process)_[a-z0-9_]+)/g)].map((match) => match[1].replace(/_(bucket|sum|count)$/, ''));

  it('is importable: a Prometheus data source input, and every panel queries it', () => {
    expect(dashboard.__inputs.map((input) => input.name)).toEqual(['DS_PROMETHEUS']);
    const queried = dashboard.panels.filter((panel) => panel.type !== 'row');
    expect(queried.length).toBeGreaterThan(20);
    expect(queried.filter((panel) => !panel.targets?.length).map((panel) => panel.title)).toEqual([]);
  });

  it('queries only metrics the service exports', () => {
    const used = dashboard.panels.flatMap((panel) => (panel.targets ?? []).flatMap((target) => metricNames(target.expr)));
    expect(used.length).toBeGreaterThan(30);
    expect([...new Set(used)].filter((name) => !registered.has(name))).toEqual([]);
  });

  it('names only exported metrics in the guide, and every duo_ metric there', () => {
    const named = new Set(metricNames(guide));
    expect([...named].filter((name) => !registered.has(name))).toEqual([]);
    expect([...registered].filter((name) => name.startsWith('duo_') && !named.has(name))).toEqual([]);
  });
});
