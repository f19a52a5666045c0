/** Code people paste into chat, in several languages; the generator fences some and not others. */
export const CODE_SNIPPETS: ReadonlyArray<{ language: string; code: string }> = [
  {
    language: 'ts',
    code: `export async function getUserById(id: string): Promise<User | null> {
  const rows = await db.query('SELECT * FROM users WHERE id = $1', [id]);
  return rows.length ? toUser(rows[0]) : null;
}`,
  },
  {
    language: 'js',
    code: `function debounce(fn, wait) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), wait);
  };
}`,
  },
  {
    language: 'python',
    code: `def load_users(path):
    users = []
    with open(path) as f:
        for line in f:
            name, email = line.strip().split(",")
            users.append({"name": name, "email": email})
    return users`,
  },
  {
    language: 'go',
    code: `func (c *Client) Get(ctx context.Context, key string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.items[key]; ok {
		return v, nil
	}
	return "", ErrNotFound
}`,
  },
  {
    language: 'java',
    code: `public List<Order> findRecent(int limit) {
    List<Order> result = new ArrayList<>();
    for (Order order : orders) {
        if (order.getCreatedAt().isAfter(cutoff)) result.add(order);
    }
    return result.subList(0, limit);
}`,
  },
  {
    language: 'ruby',
    code: `def total_for(user)
  user.orders.select { |o| o.paid? }.sum(&:amount)
end`,
  },
  {
    language: 'rust',
    code: `fn parse_line(line: &str) -> Result<(String, u32), ParseError> {
    let mut parts = line.split('=');
    let key = parts.next().ok_or(ParseError::Missing)?.trim().to_string();
    let value = parts.next().ok_or(ParseError::Missing)?.trim().parse()?;
    Ok((key, value))
}`,
  },
  {
    language: 'tsx',
    code: `export function Sidebar({ items }: { items: Item[] }) {
  const [open, setOpen] = useState(false);
  useEffect(() => { setOpen(items.length > 0); }, [items]);
  return <nav className={open ? 'open' : ''}>{items.map((item) => <a key={item.id}>{item.label}</a>)}</nav>;
}`,
  },
  {
    language: 'sql',
    code: `SELECT u.id, COUNT(o.id) AS orders
FROM users u
LEFT JOIN orders o ON o.user_id = u.id
WHERE o.created_at > NOW() - INTERVAL '30 days'
GROUP BY u.id;`,
  },
  {
    language: 'python',
    code: `class RateLimiter:
    def __init__(self, limit):
        self.limit = limit
        self.calls = {}

    def allow(self, key):
        self.calls[key] = self.calls.get(key, 0) + 1
        return self.calls[key] <= self.limit`,
  },
  {
    language: 'csharp',
    code: `public async Task<Invoice> CreateAsync(InvoiceRequest request)
{
    var invoice = new Invoice { CustomerId = request.CustomerId, Total = request.Lines.Sum(l => l.Amount) };
    _db.Invoices.Add(invoice);
    await _db.SaveChangesAsync();
    return invoice;
}`,
  },
  {
    language: 'php',
    code: `function slugify($title) {
    $slug = strtolower(trim($title));
    $slug = preg_replace('/[^a-z0-9]+/', '-', $slug);
    return trim($slug, '-');
}`,
  },
];

/** Traces and error output as runtimes print them. */
export const STACK_TRACES: readonly string[] = [
  `TypeError: Cannot read properties of undefined (reading 'map')
    at Sidebar (src/components/Sidebar.tsx:14:23)
    at renderWithHooks (node_modules/react-dom/cjs/react-dom.development.js:14985:18)
    at mountIndeterminateComponent (node_modules/react-dom/cjs/react-dom.development.js:17811:13)`,
  `Traceback (most recent call last):
  File "app/main.py", line 42, in <module>
    users = load_users(path)
  File "app/users.py", line 7, in load_users
    name, email = line.strip().split(",")
ValueError: not enough values to unpack (expected 2, got 1)`,
  `Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()" because "name" is null
	at com.acme.orders.OrderService.validate(OrderService.java:88)
	at com.acme.orders.OrderService.create(OrderService.java:41)
	at com.acme.Main.main(Main.java:12)`,
  `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a5b2c]

goroutine 1 [running]:
main.(*Client).Get(0x0, {0x4c1f20, 0x3})
	/app/internal/cache/client.go:27 +0x2c
main.main()
	/app/cmd/server/main.go:15 +0x45`,
  `error[E0382]: borrow of moved value: \`config\`
  --> src/main.rs:18:20
   |
12 |     let handle = spawn(config);
   |                        ------ value moved here
18 |     println!("{}", config.name);
   |                    ^^^^^^^^^^^ value borrowed here after move`,
  `NoMethodError: undefined method \`amount' for nil:NilClass
  app/models/user.rb:12:in \`block in total_for'
  app/models/user.rb:12:in \`select'
  app/controllers/orders_controller.rb:8:in \`index'`,
  `Unhandled exception. System.InvalidOperationException: Sequence contains no elements
   at System.Linq.ThrowHelper.ThrowNoElementsException()
   at Billing.InvoiceService.CreateAsync(InvoiceRequest request) in /src/Billing/InvoiceService.cs:line 31`,
  `Error: connect ECONNREFUSED 127.0.0.1:5432
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)`,
  `src/api/handlers.ts:27:11 - error TS2322: Type 'string | undefined' is not assignable to type 'string'.

27     const id: string = request.params.id;
             ~~`,
  `KeyError: 'email'
  File "services/mailer.py", line 19, in send_welcome
    address = user["email"]`,
];
