// Issue 68: `hotpath init` found only `/` in a real Express application whose routes sit behind
// routers mounted across files. These fixtures mount routers the ways real applications do, in
// JavaScript and TypeScript, and the discovery must see the paths the framework serves.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseRoutes } from '../src/init/route-choice.js';
import { discoverRoutes, joinPath } from '../src/init/routes.js';
import { listSourceFiles } from '../src/source/files.js';

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', 'init-apps', name);
const routesOf = (name: string) => discoverRoutes(fixture(name), listSourceFiles(fixture(name)));

describe('GET routes as the framework mounts them', () => {
  it('Express: routers mounted across .ts and .js files, index files, chains, route(), auth middleware', () => {
    const routes = routesOf('express');
    expect(routes.map((r) => r.path).sort()).toEqual(
      [
        '/',
        '/api/articles',
        '/api/articles/feed',
        '/api/articles/:slug',
        '/api/articles/:slug/comments',
        '/api/profiles/:username',
        '/api/tags',
        '/api/tags/popular',
      ].sort(),
    );
    expect(routes.find((r) => r.path === '/api/articles/feed')?.auth).toBe('auth.required');
    expect(routes.find((r) => r.path === '/api/tags')?.file).toBe('src/routes/tags.routes.js');
  });

  it('Fastify: register(plugin, { prefix }), register(import(…)), inline plugins, route({ method, url })', () => {
    expect(
      routesOf('fastify')
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/healthz', '/v1/users', '/v1/users/:id', '/v1/users/search', '/x/inline'].sort());
  });

  it('Koa: @koa/router prefixes, nested routers, chained registrations', () => {
    expect(
      routesOf('koa')
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/api/items', '/api/items/recent', '/api/items/:id', '/api/stats'].sort());
  });

  it('Nest: @Controller and @Get joined under setGlobalPrefix; a guarded route marked', () => {
    const routes = routesOf('nest');
    expect(routes.map((r) => r.path).sort()).toEqual(
      ['/api/cats', '/api/cats/breeds', '/api/cats/:id', '/api/cats/mine'].sort(),
    );
    expect(routes.find((r) => r.path === '/api/cats/mine')?.auth).toBe('@UseGuards');
    expect(routes.filter((r) => r.auth !== undefined)).toHaveLength(1);
  });

  it('Restify: server.get(path) and get({ path }), restify-router applyRoutes(server, prefix)', () => {
    expect(
      routesOf('restify')
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/ping', '/status', '/v1/products', '/v1/products/:sku'].sort());
  });

  it('joins prefixes as routers do', () => {
    expect(joinPath('', '/')).toBe('/');
    expect(joinPath('/api/', '/')).toBe('/api');
    expect(joinPath('api', 'tags/')).toBe('/api/tags');
  });
});

describe('which routes init writes', () => {
  it('own routes without parameters first, seeded parameters filled, the rest left out with a reason', () => {
    const choice = chooseRoutes(routesOf('express'), new Map([['username', 'alice']]));
    expect(choice.chosen).toEqual(['/api/articles', '/api/tags', '/api/tags/popular', '/api/profiles/alice']);
    expect(choice.leftOut.map((l) => l.path)).toEqual([
      '/api/articles/feed',
      '/api/articles/:slug',
      '/api/articles/:slug/comments',
      '/',
    ]);
    expect(choice.leftOut[3]?.why).toBe('a root or health check: measures little a pull request changes');
    expect(choice.leftOut[0]?.why).toContain('behind auth.required');
    expect(choice.leftOut[1]?.why).toContain('url "/api/articles/<slug>"');
  });

  it('names the plain routes over the cap first among those left out', () => {
    const found = [
      ...['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((x) => ({ path: `/api/${x}/:id`, file: 'r.js' })),
      ...['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((x) => ({ path: `/api/${x}`, file: 'r.js' })),
      { path: '/api/me', file: 'r.js', auth: 'requireUser' },
    ];
    const choice = chooseRoutes(found, new Map());
    expect(choice.chosen).toEqual(['/api/a', '/api/b', '/api/c', '/api/d', '/api/e']);
    expect(choice.leftOut.slice(0, 3).map((l) => [l.path, l.why])).toEqual([
      ['/api/f', 'only 5 routes are written; add it to scenarios to measure it too'],
      ['/api/g', 'only 5 routes are written; add it to scenarios to measure it too'],
      ['/api/a/:id', 'a path parameter: add a scenario with a real value, url "/api/a/<id>"'],
    ]);
    expect(choice.leftOut.at(-1)?.path).toBe('/api/me');
  });
});
