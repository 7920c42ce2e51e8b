// The communities pages (served at /assets/communities.js; every page works without it).
(function () {
  'use strict';
  // A button with data-confirm asks before its form is sent (removing a member, revoking a code).
  document.addEventListener(
    'click',
    function (event) {
      var button = event.target instanceof Element ? event.target.closest('button[data-confirm]') : null;
      if (button && !window.confirm(button.getAttribute('data-confirm'))) event.preventDefault();
    },
    true,
  );
})();
