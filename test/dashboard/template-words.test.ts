import { expect } from 'chai';
import { templateInWords, templateParts } from '../../web/src/pages/sequences/template-words';

// Issue 37, item 12: a message's Liquid read as words, the one module the builder, the version
// diff and the run timeline draw a subject from.

describe('a Liquid template in words', () => {
  it('names each variable, whatever its filters', () => {
    expect(templateParts('Welcome, {{ contact.firstName | default: "there" }}!')).to.deep.equal([{ text: 'Welcome, ' }, { variable: 'first name' }, { text: '!' }]);
    expect(templateInWords('Your {{contact.customFields.planName}} plan ends {{ trigger.properties.ends_at }}')).to.equal("Your [plan name] plan ends [trigger's ends at]");
    expect(templateInWords('{{ unsubscribe_url }}')).to.equal('[unsubscribe link]');
  });

  it('reads tags as short words and leaves text that does not parse as written', () => {
    expect(templateInWords('{% if contact.firstName %}Hi {{ contact.firstName }}{% else %}Hello{% endif %}')).to.equal('[if first name]Hi [first name][else]Hello[end]');
    expect(templateInWords('Welcome {{ contact.firstName ')).to.equal('Welcome {{ contact.firstName ');
    expect(templateInWords('No variables')).to.equal('No variables');
  });
});
