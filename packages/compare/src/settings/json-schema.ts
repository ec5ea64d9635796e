import { flagOf, SCENARIO_SPECS, SETTINGS, type SettingSpec } from './table.js';

type JsonSchema = Record<string, unknown>;

function valueSchema(spec: SettingSpec): JsonSchema {
  const range: JsonSchema = {};
  if (spec.min !== undefined) range[spec.minExclusive ? 'exclusiveMinimum' : 'minimum'] = spec.min;
  if (spec.max !== undefined) range.maximum = spec.max;
  switch (spec.kind) {
    case 'integer':
      return { type: 'integer', ...range };
    case 'integer-or-auto':
      return { anyOf: [{ type: 'integer', ...range }, { const: 'auto' }] };
    case 'rate':
      return {
        anyOf: [
          { type: 'number', ...range },
          { type: 'string', pattern: '^\\s*(\\d+(\\.\\d+)?|\\.\\d+)\\s*%\\s*$' },
        ],
      };
    case 'slo': {
      const latency = {
        anyOf: [
          { type: 'number', exclusiveMinimum: 0 },
          { type: 'string', pattern: '^\\s*(\\d+(\\.\\d+)?|\\.\\d+)\\s*(ms|s)?\\s*$' },
        ],
      };
      return {
        anyOf: [
          { type: 'string', minLength: 1 },
          {
            type: 'object',
            additionalProperties: false,
            minProperties: 1,
            properties: {
              p50: latency,
              p90: latency,
              p99: latency,
              errors: {
                anyOf: [
                  { type: 'number', minimum: 0, maximum: 100 },
                  { type: 'string', pattern: '^\\s*(\\d+(\\.\\d+)?|\\.\\d+)\\s*%?\\s*$' },
                ],
              },
            },
          },
        ],
      };
    }
    case 'number':
    case 'percent':
      return { type: 'number', ...range };
    case 'duration':
      return {
        anyOf: [
          { type: 'number', ...range },
          { type: 'string', pattern: '^\\s*(\\d+(\\.\\d+)?|\\.\\d+)\\s*(ms|s|m|h)?\\s*$' },
        ],
      };
    case 'boolean':
      return { type: 'boolean' };
    case 'json':
      return { anyOf: [{ type: 'object' }, { type: 'string', minLength: 2 }] };
    case 'enum':
      return { enum: [...(spec.values ?? [])] };
    case 'headers':
      return { type: 'object', additionalProperties: { type: 'string' } };
    case 'choices':
      return { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...(spec.values ?? [])] } };
    case 'list':
      return { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } };
    case 'method':
      return { type: 'string', pattern: '^[A-Za-z]+$' };
    case 'url':
      return { type: 'string', pattern: '^(/\\S*|(https?|memcache)://\\S+)$' };
    default:
      return { type: 'string' };
  }
}

function property(spec: SettingSpec): JsonSchema {
  const unit = spec.unit
    ? ` Unit: ${spec.unit === 's' ? 'seconds' : spec.unit === 'B/req' ? 'bytes per request' : spec.unit}.`
    : '';
  const flag = flagOf(spec);
  return {
    description: `${spec.description}${unit}${flag ? ` CLI: --${flag}.` : ''}`,
    ...valueSchema(spec),
    ...(spec.default !== undefined && spec.default !== '' ? { default: spec.default } : {}),
  };
}

/** The JSON Schema of hotpath.config.json, derived from the settings table. */
export function configJsonSchema(): JsonSchema {
  const specs = SETTINGS as readonly SettingSpec[];
  const request = {
    type: 'object',
    additionalProperties: false,
    properties: {
      method: { type: 'string', pattern: '^[A-Za-z]+$' },
      path: { type: 'string', pattern: '^/\\S*$' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: { type: 'string' },
    },
  };
  const scenario = {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: { type: 'string', description: 'Unique name of the scenario, shown in the report.' },
      ...Object.fromEntries(SCENARIO_SPECS.map((s) => [s.key, property(s)])),
      requests: {
        type: 'array',
        minItems: 1,
        description: 'Several requests sent in turn on each connection (instead of method/headers/body).',
        items: request,
      },
    },
  };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://github.com/hotpath-dev/hotpath/blob/main/packages/compare/hotpath.config.schema.json',
    title: 'hotpath.config.json',
    description:
      'Settings of hotpath compare; the top-level load settings are the defaults of every scenario.',
    type: 'object',
    additionalProperties: false,
    properties: {
      $schema: { type: 'string' },
      ...Object.fromEntries(specs.map((s) => [s.key, property(s)])),
      scenarios: { type: 'array', minItems: 1, items: scenario },
    },
  };
}
