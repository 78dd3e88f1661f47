import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { loadConfig } from '../../src/config';
import { whereBouncesGo } from '../../src/startup/where-bounces-go';

// The late-bounce settings (docs/operations.md "Configuration"): the bounce domain, the
// listener, the unsubscribe mailbox and the provider webhooks' keys, and what the start says.

function loadError(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected loadConfig to reject ${JSON.stringify(env)}`);
}

describe('configuration: late bounces and provider webhooks', () => {
  it('has no bounce domain, no listener and no provider webhooks by default; the listener host is 127.0.0.1', () => {
    const config = loadConfig({});
    expect(config.bounces).to.deep.equal({ domain: undefined, smtpPort: undefined, smtpHost: '127.0.0.1', unsubscribeMailbox: undefined });
    expect(config.emailWebhooks).to.deep.equal({ sesTopicArns: [], sendgridPublicKey: undefined });
  });

  it('reads BOUNCE_DOMAIN (lower case), BOUNCE_SMTP_PORT, UNSUBSCRIBE_MAILBOX and SES_SNS_TOPIC_ARNS', () => {
    const config = loadConfig({
      BOUNCE_DOMAIN: 'Bounces.Shop.Example',
      BOUNCE_SMTP_PORT: '2525',
      UNSUBSCRIBE_MAILBOX: 'unsubscribe@bounces.shop.example',
      SES_SNS_TOPIC_ARNS: 'arn:aws:sns:us-east-1:123456789012:ses-bounces, arn:aws:sns:eu-west-1:123456789012:ses-complaints',
    });
    expect(config.bounces).to.include({ domain: 'bounces.shop.example', smtpPort: 2525, unsubscribeMailbox: 'unsubscribe@bounces.shop.example' });
    expect(config.emailWebhooks.sesTopicArns).to.deep.equal(['arn:aws:sns:us-east-1:123456789012:ses-bounces', 'arn:aws:sns:eu-west-1:123456789012:ses-complaints']);
  });

  it('takes the SendGrid key as SendGrid shows it (base64 DER) or as a PEM, and refuses an RSA key', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const base64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    expect(loadConfig({ SENDGRID_WEBHOOK_PUBLIC_KEY: base64 }).emailWebhooks.sendgridPublicKey).to.equal(base64);
    expect(loadConfig({ SENDGRID_WEBHOOK_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'pem' }) as string }).emailWebhooks.sendgridPublicKey).to.match(/^-----BEGIN/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    expect(loadError({ SENDGRID_WEBHOOK_PUBLIC_KEY: rsa })).to.include('SENDGRID_WEBHOOK_PUBLIC_KEY');
  });

  it('refuses what cannot work, naming the variable', () => {
    expect(loadError({ BOUNCE_DOMAIN: 'not a domain' })).to.include('BOUNCE_DOMAIN');
    expect(loadError({ BOUNCE_SMTP_PORT: '99999', BOUNCE_DOMAIN: 'b.example.com' })).to.include('BOUNCE_SMTP_PORT');
    expect(loadError({ BOUNCE_SMTP_PORT: '2525' })).to.include('BOUNCE_SMTP_PORT');
    // The token after the + must fit a 64-character local part.
    expect(loadError({ UNSUBSCRIBE_MAILBOX: 'a-very-long-local-part-x@bounces.shop.example' })).to.include('UNSUBSCRIBE_MAILBOX');
    expect(loadError({ UNSUBSCRIBE_MAILBOX: 'unsubscribe+x@bounces.shop.example' })).to.include('UNSUBSCRIBE_MAILBOX');
    expect(loadError({ SES_SNS_TOPIC_ARNS: 'arn:aws:sqs:us-east-1:123456789012:queue' })).to.include('SES_SNS_TOPIC_ARNS');
  });

  it('says at start that late bounces cannot come back without a bounce domain, and where they go with one', () => {
    expect(whereBouncesGo(loadConfig({}).bounces, null).join('\n')).to.include('Late bounces and complaints cannot come back: no BOUNCE_DOMAIN');
    const lines = whereBouncesGo(loadConfig({ BOUNCE_DOMAIN: 'b.shop.example', BOUNCE_SMTP_PORT: '2525' }).bounces, '127.0.0.1:2525').join('\n');
    expect(lines).to.include('bounce+<token>@b.shop.example');
    expect(lines).to.include('Bounce listener (SMTP): 127.0.0.1:2525, mail for b.shop.example only');
    expect(whereBouncesGo(loadConfig({ BOUNCE_DOMAIN: 'b.shop.example' }).bounces, null).join('\n')).to.include('No bounce listener in this process');
  });
});
