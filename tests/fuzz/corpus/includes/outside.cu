#include "/etc/hostname"
