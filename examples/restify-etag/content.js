// The "backend": a large JSON document (about 1 MB) that changes only when reloaded.
import crypto from 'node:crypto';

export function loadSeed(records = 4000) {
  const items = [];
  for (let i = 0; i < records; i++) {
    items.push({
      id: i,
      name: `seed-${i}`,
      tags: ['alpha', 'beta', 'gamma'].slice(0, (i % 3) + 1),
      price: Math.round((i * 7.31) % 1000) / 10,
      description: crypto.createHash('sha256').update(String(i)).digest('hex').repeat(3),
    });
  }
  return { version: 1, items };
}
