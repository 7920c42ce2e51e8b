// First-party page views: each public page reports its own path (and the referring page of this
// site) to this service's POST /api/analytics/pageview. No cookie, no third party, no identifier
// that outlives the tab: the session id is random per tab (sessionStorage).
(function () {
  'use strict';
  var session;
  try {
    session = window.sessionStorage.getItem('an_pv');
    if (!session) {
      session = Math.random().toString(36).slice(2) + Date.now().toString(36);
      window.sessionStorage.setItem('an_pv', session);
    }
  } catch (e) {
    session = null;
  }
  var referrer = null;
  try {
    var from = document.referrer ? new window.URL(document.referrer) : null;
    if (from && from.origin === location.origin) referrer = from.pathname;
  } catch (e) {
    referrer = null;
  }
  var body = JSON.stringify({ path: location.pathname, referrer: referrer, session_id: session });
  if (navigator.sendBeacon && navigator.sendBeacon('/api/analytics/pageview', new Blob([body], { type: 'application/json' }))) return;
  fetch('/api/analytics/pageview', { method: 'POST', headers: { 'content-type': 'application/json' }, body: body, keepalive: true, credentials: 'omit' });
})();
