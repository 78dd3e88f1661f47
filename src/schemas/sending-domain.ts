import { z } from 'zod';
import { domainNameSchema } from './channel';

// An account's sending domains (docs/channels.md "Verified sending domains and the DNS records"):
// /channels/email/domains. A domain is verified once the resolver sees its token at
// _svc-verify.<domain>; mail From it (or a subdomain of it) may then go through the server's
// shared relay.

export const sendingDomainInputSchema = z.strictObject({
  domain: domainNameSchema.describe('The domain of the From addresses to send as (its subdomains are covered too).').meta({ example: 'shop.example' }),
});

export const sendingDomainParamSchema = z.strictObject({
  domain: z.string().max(253).describe('The sending domain, as added.').meta({ example: 'shop.example' }),
});

export const RECORD_STATUSES = ['found', 'missing', 'mismatch', 'lookup_failed', 'not_checked', 'no_key'] as const;

export const dnsCheckSchema = z
  .object({
    purpose: z
      .enum(['verification', 'dkim', 'spf', 'dmarc'])
      .describe('verification: proves the account controls the domain; dkim: the signing key; spf: the relay allowed to send; dmarc: the policy.'),
    type: z.literal('TXT'),
    name: z.string().nullable().describe('Where to publish it; null for dkim while the account has no DKIM key for this domain.').meta({ example: '_svc-verify.shop.example' }),
    value: z
      .string()
      .nullable()
      .describe('The text to publish; null when there is nothing to publish yet (dkim without a key).')
      .meta({ example: 'svc-verify=4f9c2a7e0b1d4c8e9a6f3b2d1c0e5a7b' }),
    seen: z
      .array(z.string())
      .nullable()
      .describe('The TXT records the resolver answered at that name (only those of this purpose at the domain itself); null: not looked up.')
      .meta({ example: ['svc-verify=4f9c2a7e0b1d4c8e9a6f3b2d1c0e5a7b'] }),
    status: z
      .enum(RECORD_STATUSES)
      .describe(
        'found: published as asked; missing: no such record; mismatch: a record of this kind with other contents; lookup_failed: ' +
          'the resolver did not answer in time or failed (try again); not_checked: listed without a lookup; no_key: no DKIM key for this domain yet.',
      ),
    problem: z.string().nullable().describe('Why the lookup failed, or what differs; null otherwise.').meta({ example: null }),
  })
  .meta({ id: 'DnsCheck' });
export type DnsCheck = z.infer<typeof dnsCheckSchema>;

export const sendingDomainSchema = z
  .object({
    domain: z.string().meta({ example: 'shop.example' }),
    status: z.enum(['pending', 'verified']).describe('verified once the token was seen at _svc-verify.<domain>; it stays verified.'),
    verifiedAt: z.iso.datetime().nullable().describe('When the token was first seen; null: pending.').meta({ example: '2026-12-01T09:30:00.000Z' }),
    lastCheckedAt: z.iso.datetime().nullable().describe('The last lookup of its records.').meta({ example: '2026-12-01T09:30:00.000Z' }),
    createdAt: z.iso.datetime().meta({ example: '2026-12-01T09:25:00.000Z' }),
    records: z.array(dnsCheckSchema).describe('The records to publish, in this order: verification, dkim, spf, dmarc.'),
  })
  .meta({ id: 'SendingDomain' });
export type SendingDomainDto = z.infer<typeof sendingDomainSchema>;

export const sendingDomainListSchema = z.object({
  domains: z.array(sendingDomainSchema).describe('The account\'s sending domains, by name.'),
  operatorDomains: z
    .array(z.string())
    .describe('The server\'s own domains (EMAIL_FROM\'s and BOUNCE_DOMAIN): verified for every account.')
    .meta({ example: ['svc.example'] }),
});
