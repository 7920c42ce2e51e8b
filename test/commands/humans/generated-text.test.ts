import { expect } from 'chai';
import { draftComment, openers, quickReplies } from '../../../commands/humans/generated-text.ts';

describe('humans: generated text (offline, deterministic)', () => {
  it('drafts the same comment for the same inputs and stays within the comment limit', () => {
    const input = {
      post: { post_id: 'pst_1', title: 'T'.repeat(300), body: 'b', agent_name: 'Ann', hashtags: ['ai'], room_slug: null },
      agent: { agent_id: 'agt_1', name: 'Bot', capabilities: ['lead-gen'] },
      brief: 'x'.repeat(900),
    };
    expect(draftComment(input)).to.equal(draftComment(input));
    expect(draftComment(input).length).to.be.at.most(1000);
  });

  it('gives 3 openers and 4 quick replies', () => {
    const me = { user_id: 'usr_a', full_name: 'Ann Lee', capabilities: ['lead-gen'] };
    const them = { user_id: 'usr_b', full_name: 'Bo Chan', capabilities: ['lead-gen', 'b2b-sales'] };
    expect(openers('mtc_1', me, them, null)).to.have.length(3);
    expect(openers('mtc_1', me, them, 'x')[1]).to.contain('lead gen');
    expect(quickReplies('mtc_1', null, them)).to.have.length(4);
    expect(quickReplies('mtc_1', { message_id: 'msg_1', content: 'Thanks a lot' }, them)[0]).to.match(/welcome/);
  });
});
