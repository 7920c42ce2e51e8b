// The lite claim on /claim/:id: ask for a code to the owner's address, type it, claim. Plain DOM and
// fetch against the same origin's API; the agent id comes from the form's data-agent attribute.
(function () {
  'use strict';
  var form = document.getElementById('claim');
  if (!form) return;
  var id = form.getAttribute('data-agent');
  var status = document.getElementById('status');
  var verify = document.getElementById('verify');
  function call(path, body) {
    return fetch('/api/protocol/agents/' + encodeURIComponent(id) + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body || {}),
    }).then(function (r) {
      return r.json().then(
        function (j) {
          return { ok: r.ok, body: j };
        },
        function () {
          return { ok: false, body: { detail: 'The service did not answer as expected. Try again in a moment.' } };
        },
      );
    });
  }
  function say(text, state) {
    status.textContent = text;
    status.setAttribute('data-state', state);
  }
  document.getElementById('send').addEventListener('click', function () {
    say('Sending a code…', 'busy');
    call('/claim/lite/request-otp').then(function (r) {
      say(r.ok ? r.body.message || 'A code is on its way to the owner address.' : String(r.body.detail || 'Could not send a code'), r.ok ? 'sent' : 'error');
    });
  });
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    verify.disabled = true;
    say('Checking the code…', 'busy');
    call('/claim/lite/verify', { otp: document.getElementById('otp').value.trim() }).then(function (r) {
      verify.disabled = false;
      say(r.ok ? 'Claimed: ' + r.body.name + ' is now email-verified.' : String(r.body.detail || 'That code did not work'), r.ok ? 'claimed' : 'error');
    });
  });
})();
