import { Liquid, type LiquidOptions, type Template } from 'liquidjs';

// The Liquid engines that render message templates (docs/templates.md). Configured once, here:
//  - a missing variable renders empty (strictVariables off), so `default` can stand in for it;
//  - an unknown filter is an error when the template is parsed (strictFilters), not an empty
//    output at send time;
//  - only own properties are read (no `constructor`, no prototype);
//  - no file is ever read: include, render and layout are refused when a template is parsed;
//  - each parse and each render is bounded (TEMPLATE_LIMITS), so one template cannot hold a
//    worker or its memory.
// liquidjs decides escaping when it parses an output (outputEscape adds an `escape` filter to
// every `{{ }}` not ending in `raw`), so HTML and plain text need an instance each, with the
// same settings otherwise.

export const TEMPLATE_LIMITS = {
  // Characters in one template: above the largest field (100 KiB), far below what costs.
  parseChars: 200_000,
  // Milliseconds of rendering per template, checked as it goes.
  renderMs: 100,
  // liquidjs's allocation units per render (about characters of strings and items of arrays
  // that filters and loops create): 10 million, a few times the largest field.
  memory: 10_000_000,
} as const;

const OPTIONS: LiquidOptions = {
  strictVariables: false,
  strictFilters: true,
  ownPropertyOnly: true,
  // Messages leave the service: times in UTC, whatever the server's zone.
  timezoneOffset: 0,
  parseLimit: TEMPLATE_LIMITS.parseChars,
  renderLimit: TEMPLATE_LIMITS.renderMs,
  memoryLimit: TEMPLATE_LIMITS.memory,
  // Nothing to look files up in, should a tag try.
  templates: {},
};

const FILE_TAGS = ['include', 'render', 'layout', 'block'] as const;

function engine(options: LiquidOptions): Liquid {
  const liquid = new Liquid({ ...OPTIONS, ...options });
  for (const name of FILE_TAGS) {
    liquid.registerTag(name, {
      parse() {
        throw new Error(`the ${name} tag is not available in message templates`);
      },
      render() {
        return '';
      },
    });
  }
  return liquid;
}

export const htmlLiquid = engine({ outputEscape: 'escape' });
export const plainLiquid = engine({});

export type TemplateKind = 'html' | 'plain';
export type ParsedTemplate = Template[];

export function liquidFor(kind: TemplateKind): Liquid {
  return kind === 'html' ? htmlLiquid : plainLiquid;
}
