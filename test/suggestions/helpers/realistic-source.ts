/**
 * Generated source files that look like real code (doc comments, classes, methods, nested blocks,
 * multi-line strings with blank lines, some empty functions), for the intent benchmark and for the
 * tests that compare windowed parsing with whole-file parsing. Deterministic for a given seed.
 */
import { createRandom } from '../../../src/random';

export type RealisticLanguage = 'typescript' | 'python' | 'go' | 'java' | 'csharp' | 'php' | 'ruby';

export const REALISTIC_FILE_NAMES: Record<RealisticLanguage, string> = {
  typescript: 'service.ts',
  python: 'service.py',
  go: 'service.go',
  java: 'Service.java',
  csharp: 'Service.cs',
  php: 'Service.php',
  ruby: 'service.rb',
};

const NOUNS = ['user', 'order', 'invoice', 'project', 'ticket', 'payment', 'session', 'report', 'account', 'widget'];

type Unit = (noun: string, Name: string, index: number) => string;

const TYPESCRIPT: Unit[] = [
  (noun, Name, i) => `/**
 * Loads a page of ${noun}s, newest first.
 * Retries once when the store is busy.
 */
export async function load${Name}s${i}(store: Store, page: number, size = 20): Promise<${Name}[]> {
  const offset = page * size;
  // The store caps pages at 100 rows.
  const rows = await store.query<${Name}>(\`SELECT * FROM ${noun}s
    WHERE deleted_at IS NULL

    ORDER BY created_at DESC LIMIT \${size} OFFSET \${offset}\`);
  if (rows.length === 0) {
    return [];
  }
  return rows.map((row) => ({ ...row, loadedAt: Date.now() }));
}
`,
  (noun, Name, i) => `export class ${Name}Service${i} {
  private readonly cache = new Map<string, ${Name}>();

  constructor(private readonly repository: Repository<${Name}>) {}

  /** Finds one ${noun} by id, from the cache when it can. */
  async find(id: string): Promise<${Name} | undefined> {
    const cached = this.cache.get(id);
    if (cached) return cached;
    const found = await this.repository.findOne({ where: { id } });
    if (found) this.cache.set(id, found);
    return found;
  }

  clear(): void {
    this.cache.clear();
  }

  onChange(): void {}

  validate(${noun}: ${Name}): boolean {
  }
}
`,
  (noun, Name, i) => `export interface ${Name}Options${i} {
  /** How many ${noun}s to keep. */
  limit: number;
  // Milliseconds.
  timeout?: number;
  onError?: (error: Error) => void;
}
`,
  (noun, Name, i) => `export const summarize${Name}${i} = (items: ${Name}[]): Record<string, number> => {
  const totals: Record<string, number> = {};
  for (const item of items) {
    switch (item.status) {
      case 'open':
        totals.open = (totals.open ?? 0) + 1;
        break;
      default:
        totals.other = (totals.other ?? 0) + 1;
    }
  }
  return totals;
};

export const noop${Name}${i} = () => {
};
`,
];

const PYTHON: Unit[] = [
  (noun, Name, i) => `def load_${noun}s_${i}(store, page, size=20):
    """Load a page of ${noun}s, newest first.

    Retries once when the store is busy.

    Args:
        store: where ${noun}s live.
    """
    offset = page * size
    # The store caps pages at 100 rows.
    rows = store.query(
        "SELECT * FROM ${noun}s ORDER BY created_at DESC LIMIT %s OFFSET %s",
        (size, offset),
    )
    if not rows:
        return []
    return [dict(row, loaded=True) for row in rows]
`,
  (noun, Name, i) => `class ${Name}Service${i}:
    """Caches ${noun}s in memory.

    Not thread-safe.
    """

    def __init__(self, repository):
        self.repository = repository
        self.cache = {}

    def find(self, key):
        # Cache first: the repository is slow.
        if key in self.cache:
            return self.cache[key]
        found = self.repository.get(key)
        if found is not None:
            self.cache[key] = found
        return found

    def clear(self):
        self.cache.clear()

    def on_change(self, event):
        pass

    def validate(self, ${noun}):

`,
  (noun, Name, i) => `@dataclass
class ${Name}Options${i}:
    # How many ${noun}s to keep.
    limit: int = 10
    timeout: float = 2.5


QUERY_${i} = """
SELECT id, name

FROM ${noun}s
WHERE id = %s
"""
`,
];

const GO: Unit[] = [
  (noun, Name, i) => `// Load${Name}s${i} loads a page of ${noun}s, newest first.
// It retries once when the store is busy.
func Load${Name}s${i}(ctx context.Context, store Store, page, size int) ([]${Name}, error) {
	offset := page * size
	// The store caps pages at 100 rows.
	rows, err := store.Query(ctx, \`SELECT * FROM ${noun}s

		ORDER BY created_at DESC LIMIT $1 OFFSET $2\`, size, offset)
	if err != nil {
		return nil, fmt.Errorf("load ${noun}s: %w", err)
	}
	defer rows.Close()
	var result []${Name}
	for rows.Next() {
		var item ${Name}
		if err := rows.Scan(&item.ID, &item.Name); err != nil {
			return nil, err
		}
		result = append(result, item)
	}
	return result, nil
}
`,
  (noun, Name, i) => `// ${Name}Cache${i} keeps ${noun}s in memory.
type ${Name}Cache${i} struct {
	mu    sync.Mutex
	items map[string]${Name}
}

func (c *${Name}Cache${i}) Get(key string) (${Name}, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	item, ok := c.items[key]
	return item, ok
}

func (c *${Name}Cache${i}) Clear() {
}

func (c *${Name}Cache${i}) Validate(item ${Name}) error {

}
`,
];

const JAVA_MEMBERS: Unit[] = [
  (noun, Name, i) => `    /**
     * Loads a page of ${noun}s, newest first.
     *
     * @param page zero-based
     */
    public List<${Name}> load${Name}s${i}(int page, int size) {
        int offset = page * size;
        // The store caps pages at 100 rows.
        List<${Name}> rows = store.query("SELECT * FROM ${noun}s LIMIT ? OFFSET ?", size, offset);
        if (rows.isEmpty()) {
            return Collections.emptyList();
        }
        return rows.stream().filter(row -> row.isActive()).collect(Collectors.toList());
    }
`,
  (noun, Name, i) => `    private final Map<String, ${Name}> cache${i} = new HashMap<>();

    public Optional<${Name}> find${Name}${i}(String id) {
        ${Name} cached = cache${i}.get(id);
        if (cached != null) {
            return Optional.of(cached);
        }
        return repository.findById(id).map(found -> {
            cache${i}.put(id, found);
            return found;
        });
    }

    public void clear${Name}${i}() {
    }

    public boolean validate${Name}${i}(${Name} ${noun}) {

    }
`,
  (noun, Name, i) => `    private static final String QUERY_${i} = """
        SELECT id, name

        FROM ${noun}s
        """;

    public Runnable on${Name}Change${i}() {
        return () -> {
        };
    }
`,
];

const CSHARP_MEMBERS: Unit[] = [
  (noun, Name, i) => `        /// <summary>
        /// Loads a page of ${noun}s, newest first.
        /// </summary>
        public async Task<List<${Name}>> Load${Name}s${i}(int page, int size)
        {
            var offset = page * size;
            // The store caps pages at 100 rows.
            var rows = await _store.QueryAsync<${Name}>(@"SELECT * FROM ${noun}s

                LIMIT @size OFFSET @offset", new { size, offset });
            if (rows.Count == 0)
            {
                return new List<${Name}>();
            }
            return rows.Where(row => row.IsActive).ToList();
        }
`,
  (noun, Name, i) => `        public void Clear${Name}${i}()
        {
        }

        public bool Validate${Name}${i}(${Name} ${noun})
        {

        }
`,
];

const PHP: Unit[] = [
  (noun, Name, i) => `/**
 * Loads a page of ${noun}s, newest first.
 */
function load_${noun}s_${i}($store, $page, $size = 20)
{
    $offset = $page * $size;
    // The store caps pages at 100 rows.
    $rows = $store->query("SELECT * FROM ${noun}s LIMIT ? OFFSET ?", [$size, $offset]);
    if (count($rows) === 0) {
        return [];
    }
    return array_map(fn($row) => $row + ['loaded' => true], $rows);
}
`,
  (noun, Name, i) => `class ${Name}Service${i}
{
    private array $cache = [];

    public function find(string $id): ?${Name}
    {
        # Cache first: the repository is slow.
        if (isset($this->cache[$id])) {
            return $this->cache[$id];
        }
        return $this->cache[$id] = $this->repository->find($id);
    }

    public function clear(): void
    {
    }
}
`,
];

const RUBY: Unit[] = [
  (noun, Name, i) => `# Loads a page of ${noun}s, newest first.
# Retries once when the store is busy.
def load_${noun}s_${i}(store, page, size = 20)
  offset = page * size
  # The store caps pages at 100 rows.
  rows = store.query(<<~SQL, size, offset)
    SELECT * FROM ${noun}s

    LIMIT ? OFFSET ?
  SQL
  return [] if rows.empty?

  rows.map { |row| row.merge(loaded: true) }
end
`,
  (noun, Name, i) => `class ${Name}Service${i}
  def initialize(repository)
    @repository = repository
    @cache = {}
  end

  def find(id)
    @cache[id] ||= @repository.find(id)
  end

  def clear
  end
end
`,
];

type Shape = { units: Unit[]; header: string; footer: string; indent?: string };

const SHAPES: Record<RealisticLanguage, Shape> = {
  typescript: {
    units: TYPESCRIPT,
    header: "import { Repository, Store } from './store';\nimport type { Order, User } from './types';\n\n",
    footer: '',
  },
  python: { units: PYTHON, header: 'from dataclasses import dataclass\n\nimport logging\n\n\n', footer: '' },
  go: { units: GO, header: 'package service\n\nimport (\n\t"context"\n\t"fmt"\n\t"sync"\n)\n\n', footer: '' },
  java: {
    units: JAVA_MEMBERS,
    header:
      'package com.example.service;\n\nimport java.util.*;\nimport java.util.stream.Collectors;\n\n/** Loads and caches records. ' +
      '*/\npublic class Service {\n    private final Store store;\n\n',
    footer: '}\n',
  },
  csharp: {
    units: CSHARP_MEMBERS,
    header:
      'using System.Linq;\n\nnamespace Example.Services\n{\n    /// <summary>Loads and caches records.</summary>\n    public class ' +
      'Service\n    {\n        private readonly IStore _store;\n\n',
    footer: '    }\n}\n',
  },
  php: { units: PHP, header: '<?php\n\ndeclare(strict_types=1);\n\nnamespace App\\Services;\n\n', footer: '' },
  ruby: { units: RUBY, header: "require 'json'\n\nmodule Services\n", footer: 'end\n', indent: '  ' },
};

/** A file of about `lines` lines (a little more: units are whole), in the given language. */
export function realisticSource(language: RealisticLanguage, lines: number, seed = 1): string {
  const next = createRandom(seed);
  const { units, header, footer, indent = '' } = SHAPES[language];
  const parts = [header];
  let count = header.split('\n').length + footer.split('\n').length;
  for (let index = 0; count < lines; index += 1) {
    const noun = NOUNS[Math.floor(next() * NOUNS.length)];
    const unit = units[Math.floor(next() * units.length)](noun, noun[0].toUpperCase() + noun.slice(1), index).replace(/^(?=.)/gm, indent);
    parts.push(unit, '\n');
    count += unit.split('\n').length;
  }
  parts.push(footer);
  return parts.join('');
}

/** Splits a file at the end of the indentation of a row, as if the user had clicked there. */
export function cursorAtRow(source: string, row: number): { contentAboveCursor: string; contentBelowCursor: string } {
  const lines = source.split('\n');
  const before = lines.slice(0, row).join('\n');
  const line = lines[row] ?? '';
  const indent = line.length - line.trimStart().length;
  const above = (row > 0 ? `${before}\n` : '') + line.slice(0, indent);
  return { contentAboveCursor: above, contentBelowCursor: source.slice(above.length) };
}
