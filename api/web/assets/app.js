// Progressive enhancement of the site's pages (served at /assets/app.js; every page works without it).
(function () {
  'use strict';
  // A long operation shows progress: the submit button of a posted form says so and cannot be pressed twice.
  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || event.defaultPrevented) return;
    var button = event.submitter || form.querySelector('button[type="submit"], button:not([type])');
    if (!button) return;
    // A disabled button sends no value: the pressed button's name and value go in a hidden field.
    if (button.name) {
      var field = document.createElement('input');
      field.type = 'hidden';
      field.name = button.name;
      field.value = button.value;
      form.appendChild(field);
    }
    button.setAttribute('aria-busy', 'true');
    button.disabled = true;
    if (button.dataset.busy) button.textContent = button.dataset.busy;
  });
  // Copy buttons: <button data-copy="element-id"> copies that element's text.
  document.addEventListener('click', function (event) {
    var button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
    if (!button || !navigator.clipboard) return;
    var source = document.getElementById(button.getAttribute('data-copy'));
    if (!source) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = 'Copied';
    });
  });
  // Copy buttons are shown only where copying works.
  if (navigator.clipboard) {
    document.querySelectorAll('[data-copy][hidden]').forEach(function (b) {
      b.hidden = false;
    });
  }
})();
