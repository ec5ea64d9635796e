// An orders API on PostgreSQL and Redis (node:http). Three stories, each switched by a variable:
//
//   GET /customers/:id/orders   the customer's orders with their items.
//       ORDERS_QUERY=join (default): one query for the orders, one for all their items;
//       ORDERS_QUERY=per-item: one query for the orders, then one per order (N+1).
//   GET /customers/:id/summary  the customer, their latest order and their cart (Redis).
//       SUMMARY_AWAIT=together (default): the three reads awaited together (Promise.all);
//       SUMMARY_AWAIT=series: awaited one after another — the same reads.
//   GET /products/:id           a product, through a Redis cache (60 s).
//       PRODUCT_CACHE=on (default); PRODUCT_CACHE=off: every request reads PostgreSQL.
//   GET /health                 200 without touching the stores.
import http from 'node:http';
import { connect } from './db.js';

const { pool, redis } = connect();
const perItem = process.env.ORDERS_QUERY === 'per-item';
const inSeries = process.env.SUMMARY_AWAIT === 'series';
const cached = process.env.PRODUCT_CACHE !== 'off';

async function ordersWithItems(customerId) {
  const { rows: orders } = await pool.query(
    'select id, placed_at from orders where customer_id = $1 order by placed_at desc',
    [customerId],
  );
  if (perItem) {
    for (const order of orders) {
      const { rows } = await pool.query('select product_id, quantity from order_items where order_id = $1', [
        order.id,
      ]);
      order.items = rows;
    }
    return orders;
  }
  const { rows: items } = await pool.query(
    'select order_id, product_id, quantity from order_items where order_id = any($1::int[])',
    [orders.map((o) => o.id)],
  );
  const byOrder = new Map(orders.map((o) => [o.id, Object.assign(o, { items: [] })]));
  for (const item of items) byOrder.get(item.order_id)?.items.push(item);
  return orders;
}

async function customerSummary(customerId) {
  const readCustomer = () => pool.query('select id, name, email from customers where id = $1', [customerId]);
  const readLatest = () =>
    pool.query('select id, placed_at from orders where customer_id = $1 order by placed_at desc limit 1', [
      customerId,
    ]);
  const readCart = () => redis.get(`cart:${customerId}`);
  if (inSeries) {
    const customer = await readCustomer();
    const latest = await readLatest();
    const cart = await readCart();
    return { customer: customer.rows[0], latest: latest.rows[0], cart: Number(cart) };
  }
  const [customer, latest, cart] = await Promise.all([readCustomer(), readLatest(), readCart()]);
  return { customer: customer.rows[0], latest: latest.rows[0], cart: Number(cart) };
}

async function product(id) {
  const key = `product:${id}`;
  if (cached) {
    const hit = await redis.get(key);
    if (hit) return JSON.parse(hit);
  }
  const { rows } = await pool.query('select id, name, price_cents from products where id = $1', [id]);
  if (cached && rows[0]) await redis.set(key, JSON.stringify(rows[0]), 'EX', 60);
  return rows[0];
}

const routes = [
  [/^\/customers\/(\d+)\/orders$/, ordersWithItems],
  [/^\/customers\/(\d+)\/summary$/, customerSummary],
  [/^\/products\/(\d+)$/, product],
];

const server = http.createServer((req, res) => {
  if (req.url === '/health') {
    res.end('ok');
    return;
  }
  for (const [pattern, handler] of routes) {
    const match = pattern.exec(req.url ?? '');
    if (!match) continue;
    handler(Number(match[1])).then(
      (body) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(body ?? null));
      },
      (err) => {
        res.statusCode = 500;
        res.end(String(err.message));
      },
    );
    return;
  }
  res.statusCode = 404;
  res.end('not found');
});

server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');

for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    server.close();
    redis.disconnect();
    pool.end().finally(() => process.exit(0));
  });
