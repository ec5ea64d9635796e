// Creates the example's tables and data (idempotent: drops and recreates them), and warms Redis
// with the customers' cart counts: `npm run seed` with PG_URL and REDIS_URL set.
import { connect } from './db.js';

export const CUSTOMERS = 100;
export const ORDERS_PER_CUSTOMER = 10;
export const PRODUCTS = 200;

export async function seed({ pool, redis }) {
  await pool.query(`
    drop table if exists order_items, orders, products, customers;
    create table customers (id int primary key, name text not null, email text not null);
    create table products (id int primary key, name text not null, price_cents int not null);
    create table orders (id serial primary key, customer_id int not null references customers(id), placed_at timestamptz not null);
    create table order_items (order_id int not null references orders(id), product_id int not null references products(id), quantity int not null);
    create index on orders (customer_id);
    create index on order_items (order_id);
  `);
  await pool.query(
    `insert into customers select g, 'customer ' || g, 'c' || g || '@example.com' from generate_series(1, $1::int) g`,
    [CUSTOMERS],
  );
  await pool.query(
    `insert into products select g, 'product ' || g, 100 + (g * 37) % 9900 from generate_series(1, $1::int) g`,
    [PRODUCTS],
  );
  await pool.query(
    `insert into orders (customer_id, placed_at)
       select c, now() - (o || ' hours')::interval from generate_series(1, $1::int) c, generate_series(1, $2::int) o`,
    [CUSTOMERS, ORDERS_PER_CUSTOMER],
  );
  await pool.query(
    `insert into order_items select o.id, 1 + (o.id * 7 + i) % $1::int, 1 + i from orders o, generate_series(0, 2) i`,
    [PRODUCTS],
  );
  await pool.query('analyze');
  await redis.flushdb();
  const pipeline = redis.pipeline();
  for (let id = 1; id <= CUSTOMERS; id++) pipeline.set(`cart:${id}`, String(id % 5));
  await pipeline.exec();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const stores = connect();
  try {
    await seed(stores);
    console.log('seeded: customers, products, orders, order_items; Redis carts');
  } finally {
    await stores.pool.end();
    stores.redis.disconnect();
  }
}
